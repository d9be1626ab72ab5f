import type { ConditionUnit } from '@pigeon/contract';

export const UNIT_MS: Record<ConditionUnit, number> = {
  seconds: 1000,
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
};

/** The longest time window a filter may name. */
export const MAX_WINDOW_MS = 100 * 365 * UNIT_MS.days;

/**
 * ISO 8601 dates as stored in contact data: a date, or a date and time with optional seconds,
 * milliseconds and offset (no offset means UTC). The SQL function `pigeon_iso_ts` applies the
 * same pattern, so both evaluators agree on what counts as a date.
 */
const ISO_DATE =
  /^([1-9]\d{3})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?:[T ]([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,3})?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)?)?$/;

/** Milliseconds since the epoch of an ISO date string, or undefined for anything else. */
export function parseIsoDate(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = ISO_DATE.exec(value);
  if (!m) return undefined;
  const [, year, month, day, hour, zone] = m;
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  if (Number(day) > daysInMonth) return undefined;
  const normalised =
    hour === undefined
      ? `${value.slice(0, 10)}T00:00:00Z`
      : `${value.replace(' ', 'T')}${zone === undefined ? 'Z' : ''}`;
  const ms = Date.parse(normalised);
  return Number.isNaN(ms) ? undefined : ms;
}
