import { contract } from '@pigeon/contract';
import { initClient } from '@ts-rest/core';
import type { TestPigeon } from './helpers.js';

/**
 * A client of a test Pigeon typed from the contract, so a wrong path, body or query fails to
 * compile: `await api(pigeon, auth).templates.create({ body })`. Every status comes back as a
 * value (nothing throws), with `headers`, so `expectEnvelope` reads it as it reads `pigeon.request`.
 * Requests a test makes wrong on purpose (bad bodies, unknown fields) stay on `pigeon.request`.
 */
export function api(pigeon: Pick<TestPigeon, 'url'>, headers: Record<string, string> = {}) {
  return initClient(contract, { baseUrl: pigeon.url, baseHeaders: headers, throwOnUnknownStatus: false });
}

/** The body of an answer that must have `status`, typed as that status's body; fails the test otherwise. */
export function bodyOf<R extends { status: number; body: unknown }, S extends R['status']>(
  res: R,
  status: S,
): Extract<R, { status: S }>['body'] {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as Extract<R, { status: S }>['body'];
}
