import type { IncomingHttpHeaders } from 'node:http';
import type { FieldError } from '@pigeon/contract';
import type { RequestValidationError } from '@ts-rest/express';
import type { NextFunction, Request, Response } from 'express';
import type { ZodError, ZodIssue } from 'zod';
import { AppError, BareBadRequest, validationFailed } from './errors.js';

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
  next(refusal(req, errors));
}

/** 422 with field errors, or the bare `{ error }` 400 on routes whose metadata asks for it. */
function refusal(req: object, errors: FieldError[]): Error {
  const route = (req as { tsRestRoute?: { metadata?: { errorStyle?: string } } }).tsRestRoute;
  if (route?.metadata?.errorStyle === 'bare') {
    const first = errors[0];
    return new BareBadRequest(first ? `${first.field}: ${first.message}` : 'Invalid request');
  }
  return validationFailed(errors);
}

/** Deeper JSON than this is refused before any schema (or any recursive code) walks it. */
export const MAX_INPUT_DEPTH = 64;
const MAX_REPORTED = 10;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding NUL is the point
const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * ts-rest global middleware, after authentication and before the contract's schemas: every string
 * (and object key) of the path parameters, the query and the JSON body must be text PostgreSQL and
 * mail can carry — no NUL character, no unpaired UTF-16 surrogate — and the body at most
 * `MAX_INPUT_DEPTH` levels deep. Refused with 422 naming each field, once for every route.
 */
export function refuseUnsafeInput<R extends object>(tsRestReq: R, _res: Response, next: NextFunction): void {
  const req = tsRestReq as unknown as Request;
  const errors = unsafeFields(req.params, req.query, req.body);
  next(errors.length ? refusal(req, errors) : undefined);
}

/** The strings of these values (path parameters, query, body) `refuseUnsafeInput` refuses, at most ten. */
export const unsafeFields = (...values: unknown[]): FieldError[] =>
  values.flatMap((value) => unsafeText(value, '')).slice(0, MAX_REPORTED);

/**
 * ts-rest global middleware: a route that reads a JSON body refuses a body it cannot read (a
 * form, text, a stray multipart) with 415, instead of taking it for no body at all: a route whose
 * body is optional (`POST /campaigns/:id/send`) would otherwise act on a request that meant
 * something else. Uploads (multipart routes) and routes without a body are not concerned.
 */
export function refuseUnreadBody<R extends object>(tsRestReq: R, _res: Response, next: NextFunction): void {
  const req = tsRestReq as unknown as Request & { tsRestRoute?: { body?: unknown; contentType?: string } };
  const route = req.tsRestRoute;
  const readsJson = typeof route?.body === 'object' && route.contentType !== 'multipart/form-data';
  next(readsJson ? unreadBodyError(req.headers, req.body) : undefined);
}

/** 415 when the request sent a body the JSON parser did not read (`body` undefined); else undefined. */
export function unreadBodyError(headers: IncomingHttpHeaders, body: unknown): AppError | undefined {
  const sent = headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
  if (!sent || body !== undefined) return undefined;
  return new AppError(
    'unsupported-type',
    'UNSUPPORTED_MEDIA_TYPE',
    `This route reads JSON, not ${headers['content-type'] ?? 'a body without a type'}`,
    { suggestion: 'Send the body with Content-Type: application/json.' },
  );
}

/** Walks a parsed value without recursion (so depth cannot overflow the stack). */
export function unsafeText(root: unknown, rootPath: string): FieldError[] {
  const errors: FieldError[] = [];
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: root, path: rootPath, depth: 0 }];
  while (stack.length > 0 && errors.length < MAX_REPORTED) {
    const { value, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) errors.push({ field: path || '(body)', message: problem, code: 'invalid_string' });
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) {
      errors.push({ field: path || '(body)', message: `nests deeper than ${MAX_INPUT_DEPTH} levels`, code: 'too_big' });
      continue;
    }
    for (const [key, child] of Object.entries(value)) {
      const childPath = path ? `${path}.${printableKey(key)}` : printableKey(key);
      const keyProblem = textProblem(key);
      if (keyProblem) errors.push({ field: childPath, message: `key ${keyProblem}`, code: 'invalid_string' });
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
  return errors;
}

function textProblem(text: string): string | undefined {
  if (NUL.test(text)) return 'must not contain the NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'must not contain an unpaired UTF-16 surrogate (not valid Unicode text)';
  return undefined;
}

/** A key as it can be named in an error message: offending characters shown as escapes. */
const printableKey = (key: string) =>
  key.replace(UNSAFE_CHAR, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).slice(0, 100);
const UNSAFE_CHAR = new RegExp(`${NUL.source}|${LONE_SURROGATE.source}`, 'g');
