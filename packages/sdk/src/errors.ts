import type { ErrorCode, ErrorEnvelope, FieldError } from './types.js';

/**
 * `err.code`: one of the server's codes (the contract's `ErrorCode`), or one the SDK gives when the
 * server gave none: no response (`NETWORK_ERROR`, `TIMEOUT`), a body that is not Pigeon's envelope
 * from a proxy (`BAD_GATEWAY`, `SERVICE_UNAVAILABLE`, `GATEWAY_TIMEOUT`, or `HTTP_<status>`).
 */
export type PigeonErrorCode =
  | ErrorCode
  | 'NETWORK_ERROR'
  | 'TIMEOUT'
  | 'BAD_GATEWAY'
  | 'SERVICE_UNAVAILABLE'
  | 'GATEWAY_TIMEOUT'
  | `HTTP_${number}`;

export interface PigeonErrorInit {
  status: number;
  code: PigeonErrorCode;
  message: string;
  requestId?: string;
  errors?: FieldError[];
  details?: Record<string, unknown>;
  suggestion?: string;
  body?: unknown;
  headers?: Headers;
  cause?: unknown;
}

/** Codes for error bodies that carry none (bare `{ error }`, proxies, plain text). */
const CODE_BY_STATUS: Record<number, PigeonErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  422: 'VALIDATION_ERROR',
  429: 'RATE_LIMIT_EXCEEDED',
  500: 'INTERNAL_SERVER_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};

/**
 * Every failure of an SDK call: an error response (`status` is the HTTP status), or no response at
 * all (`status` 0, `code` `NETWORK_ERROR` or `TIMEOUT`).
 */
export class PigeonError extends Error {
  override readonly name = 'PigeonError';
  readonly status: number;
  readonly code: PigeonErrorCode;
  readonly requestId?: string;
  /** Field-level validation problems (422 `VALIDATION_ERROR`). */
  readonly errors?: FieldError[];
  readonly details?: Record<string, unknown>;
  readonly suggestion?: string;
  /** The parsed response body, when there was a response. */
  readonly body?: unknown;
  /** The response headers, e.g. `Retry-After` or `RateLimit-Reset` on a 429. */
  readonly headers?: Headers;

  constructor(init: PigeonErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.errors = init.errors;
    this.details = init.details;
    this.suggestion = init.suggestion;
    this.body = init.body;
    this.headers = init.headers;
  }

  static fromResponse(status: number, body: unknown, headers: Headers): PigeonError {
    const requestId = headers.get('x-request-id') ?? undefined;
    const code: PigeonErrorCode = CODE_BY_STATUS[status] ?? `HTTP_${status}`;
    const base = { status, body, headers, requestId, code };
    if (isEnvelope(body)) {
      const { code, message, requestId: id, errors, details, suggestion } = body.error;
      return new PigeonError({ ...base, code, message, requestId: id ?? requestId, errors, details, suggestion });
    }
    if (isRecord(body) && typeof body.error === 'string') {
      return new PigeonError({ ...base, message: body.error });
    }
    return new PigeonError({ ...base, message: `Request failed with status ${status}` });
  }

  static network(cause: unknown): PigeonError {
    const reason = cause instanceof Error ? `: ${cause.message}` : '';
    return new PigeonError({ status: 0, code: 'NETWORK_ERROR', message: `Network error${reason}`, cause });
  }

  static timeout(timeoutMs: number, cause?: unknown): PigeonError {
    return new PigeonError({ status: 0, code: 'TIMEOUT', message: `Request timed out after ${timeoutMs} ms`, cause });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

// Structural check rather than ErrorEnvelope.parse: a slightly off envelope should still surface its message.
function isEnvelope(body: unknown): body is ErrorEnvelope {
  return (
    isRecord(body) &&
    body.success === false &&
    isRecord(body.error) &&
    typeof body.error.code === 'string' &&
    typeof body.error.message === 'string'
  );
}
