import { describe, expect, it } from 'vitest';
import { PigeonError } from '../src/errors.js';
import { isRetryable, parseRetryAfter, retryDelayMs } from '../src/retry.js';

const error = (status: number) => new PigeonError({ status, code: 'INTERNAL_SERVER_ERROR', message: 'x' });
const backoff = { baseDelayMs: 100, maxDelayMs: 1_000 };

describe('retry policy', () => {
  it('retries 429 always; network errors and 5xx unless an unkeyed POST/PATCH; never other 4xx', () => {
    expect(isRetryable(error(429), 'POST', false)).toBe(true);
    expect(isRetryable(error(0), 'GET', false)).toBe(true);
    expect(isRetryable(error(503), 'DELETE', false)).toBe(true);
    expect(isRetryable(error(500), 'POST', false)).toBe(false);
    expect(isRetryable(error(500), 'PATCH', false)).toBe(false);
    expect(isRetryable(error(500), 'POST', true)).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 422]) expect(isRetryable(error(status), 'GET', true)).toBe(false);
  });

  it('parses Retry-After seconds and HTTP dates', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2_000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('caps Retry-After at 60 s and backs off exponentially with jitter otherwise', () => {
    expect(retryDelayMs(0, backoff, '3600')).toBe(60_000);
    for (const attempt of [0, 1, 2, 3, 4, 5]) {
      const ceiling = Math.min(1_000, 100 * 2 ** attempt);
      const delay = retryDelayMs(attempt, backoff, null);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
});
