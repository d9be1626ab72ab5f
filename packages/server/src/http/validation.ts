import type { FieldError } from '@pigeon/contract';
import type { RequestValidationError } from '@ts-rest/express';
import type { NextFunction, Response } from 'express';
import type { ZodError, ZodIssue } from 'zod';
import { BareBadRequest, validationFailed } from './errors.js';

export function zodIssuesToFieldErrors(error: ZodError | null | undefined, prefix?: string): FieldError[] {
  return (error?.issues ?? []).map((issue) => toFieldError(issue, prefix));
}

function toFieldError(issue: ZodIssue, prefix: string | undefined): FieldError {
  const path = issue.path.join('.');
  const field = prefix ? (path ? `${prefix}.${path}` : prefix) : path || '(body)';
  const received = 'received' in issue && isSafeToEcho(issue.received) ? { received: issue.received } : {};
  return { field, message: issue.message, code: issue.code, ...received };
}

const isSafeToEcho = (v: unknown) => typeof v === 'string' && v.length <= 100;

/**
 * ts-rest's hook for requests that fail the contract's schemas: 422 `VALIDATION_ERROR` with
 * field-level errors, or the bare `{ error }` 400 on routes whose metadata asks for it.
 */
export function requestValidationErrorHandler<R extends object>(
  err: RequestValidationError,
  req: R,
  _res: Response,
  next: NextFunction,
): void {
  const errors = [
    ...zodIssuesToFieldErrors(err.pathParams),
    ...zodIssuesToFieldErrors(err.query),
    ...zodIssuesToFieldErrors(err.headers, 'headers'),
    ...zodIssuesToFieldErrors(err.body),
  ];
  const route = (req as { tsRestRoute?: { metadata?: { errorStyle?: string } } }).tsRestRoute;
  if (route?.metadata?.errorStyle === 'bare') {
    const first = errors[0];
    next(new BareBadRequest(first ? `${first.field}: ${first.message}` : 'Invalid request'));
    return;
  }
  next(validationFailed(errors));
}
