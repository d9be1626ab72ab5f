import { parse } from 'csv-parse/sync';
import iconv from 'iconv-lite';
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

export type CsvEncoding = 'utf-8' | 'utf-16' | 'windows-1252';

const UTF16_BOM = [Buffer.from([0xff, 0xfe]), Buffer.from([0xfe, 0xff])];

/**
 * The file's text. UTF-8 (with or without a BOM) when it is valid UTF-8; UTF-16 when it starts
 * with a UTF-16 BOM ("Unicode text" exports); otherwise Windows-1252, the encoding of spreadsheet
 * exports on Western systems and a superset of Latin-1's printable characters. A byte that
 * Windows-1252 leaves undefined means the file is neither: refused rather than guessed.
 */
export function decodeCsv(file: Buffer): { text: string; encoding: CsvEncoding } | { fatal: string } {
  if (UTF16_BOM.some((bom) => file.subarray(0, 2).equals(bom))) {
    return { text: iconv.decode(file, 'utf-16'), encoding: 'utf-16' };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(file), encoding: 'utf-8' };
  } catch {
    const text = iconv.decode(file, 'windows-1252');
    if (!text.includes('\uFFFD')) return { text, encoding: 'windows-1252' };
    const at = file.findIndex((byte) => [0x81, 0x8d, 0x8f, 0x90, 0x9d].includes(byte));
    return {
      fatal: `The file is neither UTF-8 nor Windows-1252 (byte 0x${file[at]?.toString(16)} at offset ${at}); save it as CSV UTF-8 and upload it again`,
    };
  }
}

interface CsvRecord {
  cells: string[];
  line: number;
}

/**
 * CSV records with the line each one starts on (a quoted cell may span lines). An unparseable file
 * (a quote never closed) is one error saying where the broken record starts.
 */
function readRecords(text: string): CsvRecord[] | { fatal: string } {
  const records: CsvRecord[] = [];
  let nextLine = 1;
  try {
    const parsed = parse(text, { relax_column_count: true, relax_quotes: true, info: true }) as unknown as Array<{
      record: string[];
      info: { lines: number };
    }>;
    for (const { record, info } of parsed) {
      records.push({ cells: record, line: nextLine });
      nextLine = info.lines + 1;
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    const reason =
      code === 'CSV_QUOTE_NOT_CLOSED' ? 'a quoted cell is never closed' : (err as Error).message.split(':')[0];
    const line = code === 'CSV_QUOTE_NOT_CLOSED' ? lastRecordEnd(text) : (err as { lines?: number }).lines;
    return { fatal: `The file is not valid CSV: ${reason} (in the record starting on line ${line ?? '?'})` };
  }
  return records.filter((r) => !(r.cells.length === 1 && r.cells[0]?.trim() === ''));
}

/** Where the record that broke starts: after the last record that parses on its own. */
function lastRecordEnd(text: string): number {
  let good = 0;
  try {
    parse(text, {
      relax_column_count: true,
      relax_quotes: true,
      info: true,
      on_record: (record, context) => {
        good = context.lines;
        return record;
      },
    });
  } catch {
    // expected: the same error again; `good` is where the last complete record ended
  }
  return good + 1;
}

/**
 * Parses an import file: a header row with `email` (any case) and other columns for `data`,
 * plus an optional `subscribed` column. Bad lines become row errors (with the line they start
 * on), never a failed import; when an email repeats, its last row wins. A file that cannot be
 * read at all (encoding, unclosed quote, no email column) is one fatal error.
 */
export function parseContactsCsv(file: Buffer): (ParsedCsv & { encoding: CsvEncoding }) | { fatal: string } {
  const decoded = decodeCsv(file);
  if ('fatal' in decoded) return decoded;
  const records = readRecords(decoded.text);
  if ('fatal' in records) return records;
  const header = (records[0]?.cells ?? []).map((h) => h.trim());
  if (header.some((h) => h.includes('\u0000'))) return { fatal: 'The CSV header contains a NUL character' };
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
  for (const { cells, line } of records.slice(1)) {
    if (cells.some((cell) => cell.includes('\u0000'))) {
      errors.push({ row: line, reason: 'contains a NUL character (byte 0x00); the row was skipped' });
      continue;
    }
    const email = (cells[emailAt] ?? '').trim().toLowerCase();
    if (!Email.safeParse(email).success) {
      errors.push({ row: line, reason: email ? `invalid email "${email.slice(0, 100)}"` : 'missing email' });
      continue;
    }
    const rawSubscribed = subscribedAt >= 0 ? (cells[subscribedAt] ?? '').trim().toLowerCase() : '';
    if (rawSubscribed && !TRUE.has(rawSubscribed) && !FALSE.has(rawSubscribed)) {
      errors.push({ row: line, reason: `subscribed must be true or false, got "${rawSubscribed.slice(0, 20)}"` });
      continue;
    }
    const data: ImportRow['data'] = {};
    for (const { name, index } of dataColumns) {
      const cell = cells[index];
      if (cell !== undefined && cell.trim() !== '') data[name] = typedCell(cell);
    }
    const previous = byEmail.get(email);
    if (previous) errors.push({ row: previous.line, reason: `duplicate of ${email}; row ${line} wins` });
    byEmail.set(email, { line, email, subscribed: rawSubscribed ? TRUE.has(rawSubscribed) : null, data });
  }
  const rows = [...byEmail.values()].sort((a, b) => a.line - b.line);
  return { rows, errors, encoding: decoded.encoding };
}
