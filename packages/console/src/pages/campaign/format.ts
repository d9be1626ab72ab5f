import type { Campaign } from '@pigeon/sdk';

/** Polled while something moves: every second while the campaign waits or sends, never after. */
export const LIVE_MS = 1000;
export const isLive = (c: Pick<Campaign, 'status'> | undefined) => c?.status === 'SENDING' || c?.status === 'SCHEDULED';

/** A rate (a fraction 0..1) as a percentage with one decimal. */
export const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;

/** The viewer's time zone by its IANA name (Europe/Berlin), as the browser knows it. */
export const viewerZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** A `datetime-local` value, read in the viewer's zone, as an ISO timestamp (undefined when empty or invalid). */
export function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** A date as a `datetime-local` value in the viewer's zone (to the minute). */
export function toLocalInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** `emails?campaign=…&status=…`: the mail log's rows behind a campaign's number. */
export function mailLogPath(campaignId: string, status?: string): string {
  const params = new URLSearchParams({ campaign: campaignId });
  if (status) params.set('status', status);
  return `emails?${params}`;
}
