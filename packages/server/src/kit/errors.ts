import type { ErrorCode, ErrorEnvelope, FieldError } from '@pigeon/contract';

export interface AppErrorExtra {
  errors?: FieldError[];
  details?: Record<string, unknown>;
  suggestion?: string;
  /** Response headers the answer carries (`Retry-After`). */
  headers?: Record<string, string>;
}

/**
 * What went wrong, in the service's words. Services say the kind and the spec's error code; how
 * each way in answers it is decided once per way in: HTTP by `httpStatusOf` below (the spec's
 * codes are not one-to-one with statuses: `403 INTERNAL_SERVER_ERROR` for an unverified sender is
 * the spec's), SMTP by smtp-submission/replies.ts.
 */
export type ErrorKind =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not-found'
  | 'not-served'
  | 'conflict'
  | 'too-large'
  | 'unsupported-type'
  | 'unprocessable'
  | 'too-many'
  | 'internal'
  | 'upstream'
  | 'unavailable';

const HTTP_STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  'not-found': 404,
  'not-served': 405,
  conflict: 409,
  'too-large': 413,
  'unsupported-type': 415,
  unprocessable: 422,
  'too-many': 429,
  internal: 500,
  upstream: 502,
  unavailable: 503,
};

/** An error the caller should see, in the domain's terms; the way in renders it (the HTTP envelope, an SMTP reply). */
export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: ErrorCode,
    message: string,
    readonly extra: AppErrorExtra = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** The bare `{ error }` 400 body that spec §7 names for template, segment and contact create. */
export class BareBadRequest extends Error {
  readonly statusCode = 400;
}

/** The HTTP status of an error's kind. */
export const httpStatusOf = (err: AppError): number => HTTP_STATUS[err.kind];

export const notFound = (what = 'Resource') => new AppError('not-found', 'NOT_FOUND', `${what} not found`);
export const badRequest = (message: string, extra?: AppErrorExtra) =>
  new AppError('invalid', 'BAD_REQUEST', message, extra);
export const conflict = (message: string, extra?: AppErrorExtra) =>
  new AppError('conflict', 'CONFLICT', message, extra);
export const forbidden = (message: string, code: ErrorCode = 'FORBIDDEN', extra?: AppErrorExtra) =>
  new AppError('forbidden', code, message, extra);
export const unauthorized = (message: string, code: ErrorCode = 'UNAUTHORIZED') =>
  new AppError('unauthenticated', code, message);
export const validationFailed = (errors: FieldError[], message = firstFailure(errors)) =>
  new AppError('unprocessable', 'VALIDATION_ERROR', message, { errors });

/**
 * The top-level message names the first failing field and why: clients written for Plunk (and most
 * hand-written ones) show only `message`, never `errors[]`.
 */
function firstFailure(errors: FieldError[]): string {
  const [first] = errors;
  if (!first) return 'Request validation failed';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more in errors[])` : '';
  return `${first.field}: ${first.message}${more}`;
}

export function toEnvelope(err: AppError, requestId: string): ErrorEnvelope {
  return {
    success: false,
    error: {
      code: err.code,
      message: err.message,
      statusCode: httpStatusOf(err),
      requestId,
      ...(err.extra.errors ? { errors: err.extra.errors } : {}),
      ...(err.extra.details ? { details: err.extra.details } : {}),
      ...(err.extra.suggestion ? { suggestion: err.extra.suggestion } : {}),
    },
    message: err.message,
    timestamp: new Date().toISOString(),
  };
}
