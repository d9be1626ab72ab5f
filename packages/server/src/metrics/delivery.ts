import { type DeliveryResult, deliveryOutcomes, transportDuration } from './registry.js';

let lastError: { message: string; at: Date } | undefined;

/**
 * The delivery worker's one call per attempt: counts the outcome, times the transport's answer when
 * there was one, and keeps the last error (written with the worker's heartbeat for `pigeon status`).
 */
export function recordDeliveryOutcome(
  result: DeliveryResult,
  details: { transport?: string; relay?: string; transportSeconds?: number; error?: string } = {},
): void {
  deliveryOutcomes.inc({ result });
  if (details.transport && details.transportSeconds !== undefined) {
    transportDuration.observe(
      { transport: details.transport, relay: details.relay ?? details.transport },
      details.transportSeconds,
    );
  }
  if (details.error) lastError = { message: details.error.slice(0, 500), at: new Date() };
}

export function lastDeliveryErrorSeen(): { message: string; at: Date } | undefined {
  return lastError;
}
