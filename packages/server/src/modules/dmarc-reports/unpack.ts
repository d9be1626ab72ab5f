import { gunzipSync } from 'node:zlib';
import { unzipSync } from 'fflate';

/** A report file refused: `oversized` past the decompressed limit, `corrupt` when it cannot be read. */
export class RefusedReportFile extends Error {
  constructor(
    readonly reason: 'oversized' | 'corrupt',
    message: string,
  ) {
    super(message);
  }
}

/** Decompressed bytes a message's report files may still take, of `limit` in all. */
export interface Budget {
  left: number;
  limit: number;
}

export interface ReportPart {
  filename?: string;
  contentType: string;
  content: Buffer;
}

type Kind = 'zip' | 'gzip' | 'xml';

/** What a part holds, by its type or else its name (reporters send zip as octet-stream too). */
export function reportKind(part: ReportPart): Kind | undefined {
  const type = part.contentType.toLowerCase();
  const name = (part.filename ?? '').toLowerCase();
  if (type === 'application/zip' || type === 'application/x-zip-compressed' || name.endsWith('.zip')) return 'zip';
  if (type === 'application/gzip' || type === 'application/x-gzip' || name.endsWith('.gz')) return 'gzip';
  if (type === 'text/xml' || type === 'application/xml' || name.endsWith('.xml')) return 'xml';
  return undefined;
}

/**
 * The XML documents of one report file, each at most `budget.left` bytes decompressed (the budget
 * is shared by every file of a message, so many small entries do not add up to a bomb either).
 * gzip stops inflating at the limit; zip entries are inflated into buffers of their declared
 * size, refused when that is over the limit, so a lying header yields a truncated (corrupt) document.
 */
export function unpackReportFile(part: ReportPart, budget: Budget): string[] {
  const kind = reportKind(part);
  if (kind === 'xml') return [take(part.content, budget)];
  if (kind === 'gzip') {
    let xml: Buffer;
    try {
      xml = gunzipSync(part.content, { maxOutputLength: budget.left + 1 });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
        throw oversized(budget);
      throw new RefusedReportFile('corrupt', `${part.filename ?? 'a gzip part'} is not gzip`);
    }
    return [take(xml, budget)];
  }
  if (kind === 'zip') return unzipEntries(part, budget);
  return [];
}

function unzipEntries(part: ReportPart, budget: Budget): string[] {
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(new Uint8Array(part.content.buffer, part.content.byteOffset, part.content.byteLength), {
      filter: (file) => {
        if (file.name.endsWith('/')) return false;
        if (file.originalSize > budget.left) throw oversized(budget);
        budget.left -= file.originalSize;
        return true;
      },
    });
  } catch (err) {
    if (err instanceof RefusedReportFile) throw err;
    throw new RefusedReportFile('corrupt', `${part.filename ?? 'a zip part'} is not a zip archive`);
  }
  return Object.values(files).map((bytes) => Buffer.from(bytes).toString('utf8'));
}

const oversized = (budget: Budget) =>
  new RefusedReportFile('oversized', `the report is larger than ${budget.limit} bytes once decompressed`);

function take(bytes: Buffer, budget: Budget): string {
  if (bytes.length > budget.left) throw oversized(budget);
  budget.left -= bytes.length;
  return bytes.toString('utf8');
}
