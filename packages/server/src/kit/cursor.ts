import { validationFailed } from './errors.js';

/** Opaque keyset cursor: the sort value and id of the last row of a page. */
export interface Cursor {
  v: string;
  id: string;
}

export const encodeCursor = (cursor: Cursor): string => Buffer.from(JSON.stringify(cursor)).toString('base64url');

export function decodeCursor(raw: string): Cursor {
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (typeof parsed?.v === 'string' && typeof parsed?.id === 'string') return parsed;
  } catch {
    // fall through to the validation error
  }
  throw validationFailed([
    { field: 'cursor', message: 'Invalid cursor: pass the cursor of the previous page as is', code: 'invalid_cursor' },
  ]);
}

export const escapeLike = (s: string) => s.replace(/[\\%_]/g, (ch) => `\\${ch}`);
