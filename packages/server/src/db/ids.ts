/**
 * Pigeon's ids are UUIDv7: their first 48 bits are the Unix time in milliseconds, so a time is a
 * range of ids (and a range of the history tables' partitions).
 */
/** The lowest and the highest uuid: bounds that hold every id. */
export const FIRST_ID = '00000000-0000-0000-0000-000000000000';
export const LAST_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

const timeHex = (ms: number) => Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');

/** The lowest UUIDv7 of millisecond `ms`: every id made at or after it sorts at or above it. */
export function lowestIdAt(ms: number): string {
  const hex = timeHex(ms);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/** The highest UUIDv7 of millisecond `ms`: every id made at or before it sorts at or below it. */
export function highestIdAt(ms: number): string {
  const hex = timeHex(ms);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-ffff-ffff-ffffffffffff`;
}
