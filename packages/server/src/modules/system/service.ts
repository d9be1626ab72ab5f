import type { AppDeps } from '../../deps.js';
import { VERSION } from '../../version.js';
import { readTransportStatus } from '../emails/transport-status.js';

/**
 * Liveness: one primary-key read, which both proves the database answers and reads the mail
 * transport's breaker. A transport that is down does not make the process unhealthy (mail waits).
 */
export async function checkHealth(deps: AppDeps) {
  const mailTransport = await readTransportStatus(deps.db.pool, deps.mailer.kind).catch(() => undefined);
  const database = mailTransport ? ('up' as const) : ('down' as const);
  return {
    status: database === 'up' ? ('ok' as const) : ('degraded' as const),
    database,
    version: VERSION,
    uptimeSeconds: Math.round((Date.now() - deps.startedAt.getTime()) / 1000),
    ...(mailTransport && { mailTransport }),
  };
}

/** Feature flags of this deployment, for dashboards and SDKs (no authentication). */
export function deploymentConfig(deps: AppDeps) {
  return {
    version: VERSION,
    publicUrl: deps.config.http.publicUrl,
    signupsEnabled: !deps.config.auth.signupsDisabled,
    oauthProviders: [],
    billingEnabled: deps.config.billing.stripe !== undefined,
    storage: 'local' as const,
    mailTransport: deps.mailer.kind,
    trackingModes: ['ENABLED' as const, 'DISABLED' as const, 'MARKETING_ONLY' as const],
  };
}
