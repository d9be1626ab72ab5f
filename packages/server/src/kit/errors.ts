import type { ErrorCode, ErrorEnvelope, FieldError } from '@pigeon/contract';

export interface AppErrorExtra {
  errors?: FieldError[];
  details?: Record<string, unknown>;
  suggestion?: string;
  /** Response headers the answer carries (`Retry-After`). */
  headers?: Record<string, string>;
}

/** An error the client should see, rendered into the spec's envelope by the error handler. */
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
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

export const notFound = (what = 'Resource') => new AppError(404, 'NOT_FOUND', `${what} not found`);
export const badRequest = (message: string, extra?: AppErrorExtra) => new AppError(400, 'BAD_REQUEST', message, extra);
export const conflict = (message: string, extra?: AppErrorExtra) => new AppError(409, 'CONFLICT', message, extra);
export const forbidden = (message: string, code: ErrorCode = 'FORBIDDEN', extra?: AppErrorExtra) =>
  new AppError(403, code, message, extra);
export const unauthorized = (message: string, code: ErrorCode = 'UNAUTHORIZED') => new AppError(401, code, message);
export const validationFailed = (errors: FieldError[], message = firstFailure(errors)) =>
  new AppError(422, 'VALIDATION_ERROR', message, { errors });

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
      statusCode: err.statusCode,
      requestId,
      ...(err.extra.errors ? { errors: err.extra.errors } : {}),
      ...(err.extra.details ? { details: err.extra.details } : {}),
      ...(err.extra.suggestion ? { suggestion: err.extra.suggestion } : {}),
    },
    message: err.message,
    timestamp: new Date().toISOString(),
  };
}
