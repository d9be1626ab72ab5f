import { parse } from 'csv-parse/sync';
import { z } from 'zod';
import { RESERVED_KEYS } from './data-rules.js';

export interface ImportRow {
  line: number;
  email: string;
  subscribed: boolean | null;
  data: Record<string, string | number | boolean>;
}

export interface ParsedCsv {
  rows: ImportRow[];
  errors: Array<{ row: number; reason: string }>;
}

const Email = z.string().email().max(254);
const TRUE = new Set(['true', 'yes', '1', 'y']);
const FALSE = new Set(['false', 'no', '0', 'n']);

/** Numbers (without leading zeros, so codes like 007 stay text) and booleans are recognised. */
export function typedCell(raw: string): string | number | boolean {
  const value = raw.trim();
  if (/^-?(0|[1-9]\d{0,14})(\.\d+)?$/.test(value)) return Number(value);
  const lower = value.toLowerCase();
  if (lower === 'true' || lower === 'false') return lower === 'true'; // spreadsheets write TRUE/FALSE
  return value;
}

/**
 * Parses an import file: a header row with `email` (any case) and other columns for `data`,
 * plus an optional `subscribed` column. Bad lines become row errors, never a failed import;
 * when an email repeats, its last row wins.
 */
export function parseContactsCsv(file: Buffer): ParsedCsv | { fatal: string } {
  let records: string[][];
  try {
    records = parse(file, { bom: true, relax_column_count: true, skip_empty_lines: true, relax_quotes: true });
  } catch (err) {
    return { fatal: `The file is not valid CSV: ${(err as Error).message}` };
  }
  const header = (records[0] ?? []).map((h) => h.trim());
  const emailAt = header.findIndex((h) => h.toLowerCase() === 'email');
  if (emailAt < 0) return { fatal: 'The CSV header has no "email" column' };
  const subscribedAt = header.findIndex((h) => h.toLowerCase() === 'subscribed');
  const dataColumns = header
    .map((name, index) => ({ name, index }))
    .filter(
      ({ name, index }) => index !== emailAt && index !== subscribedAt && name !== '' && !RESERVED_KEYS.has(name),
    );

  const byEmail = new Map<string, ImportRow>();
  const errors: ParsedCsv['errors'] = [];
  records.slice(1).forEach((cells, i) => {
    const line = i + 2;
    const email = (cells[emailAt] ?? '').trim().toLowerCase();
    if (!Email.safeParse(email).success) {
      errors.push({ row: line, reason: email ? `invalid email "${email.slice(0, 100)}"` : 'missing email' });
      return;
    }
    const rawSubscribed = subscribedAt >= 0 ? (cells[subscribedAt] ?? '').trim().toLowerCase() : '';
    if (rawSubscribed && !TRUE.has(rawSubscribed) && !FALSE.has(rawSubscribed)) {
      errors.push({ row: line, reason: `subscribed must be true or false, got "${rawSubscribed.slice(0, 20)}"` });
      return;
    }
    const data: ImportRow['data'] = {};
    for (const { name, index } of dataColumns) {
      const cell = cells[index];
      if (cell !== undefined && cell.trim() !== '') data[name] = typedCell(cell);
    }
    const previous = byEmail.get(email);
    if (previous) errors.push({ row: previous.line, reason: `duplicate of ${email}; row ${line} wins` });
    byEmail.set(email, { line, email, subscribed: rawSubscribed ? TRUE.has(rawSubscribed) : null, data });
  });
  return { rows: [...byEmail.values()].sort((a, b) => a.line - b.line), errors };
}
