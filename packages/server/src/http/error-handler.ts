import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { certainlyRolledBack } from '../db/errors.js';
import {
  AppError,
  BareBadRequest,
  badRequest,
  conflict,
  httpStatusOf,
  notFound,
  toEnvelope,
  validationFailed,
} from '../kit/errors.js';
import type { Logger } from '../logger.js';

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
  code?: string;
}

/** Unknown routes: 404 in the envelope. */
export function notFoundHandler(req: Request, _res: Response, next: NextFunction): void {
  next(new AppError('not-found', 'NOT_FOUND', `No route for ${req.method} ${req.path}`));
}

/** What `errorAnswer` needs to know about the request that failed. */
export interface FailedRequest {
  requestId: string;
  method: string;
  path: string;
  /** The request's Content-Encoding header, to name a body that failed to decompress. */
  contentEncoding: string | undefined;
  /** The route's metadata asks for the spec's bare `{ error }` 400. */
  bareErrors: boolean;
}

/**
 * The one place that turns any thrown error into the spec's envelope: the status and body to
 * answer. Internals never leak; an unexpected error is logged here.
 */
export function errorAnswer(err: unknown, req: FailedRequest, logger: Logger): ErrorAnswer {
  const { requestId } = req;
  if (err instanceof BareBadRequest) return { status: 400, body: { error: err.message }, unexpected: false };
  const appError = err instanceof AppError ? err : fromKnownError(err as BodyParserError, req.contentEncoding);
  if (appError?.kind === 'invalid' && req.bareErrors) {
    return { status: 400, body: { error: appError.message }, unexpected: false };
  }
  if (appError) return { status: httpStatusOf(appError), body: toEnvelope(appError, requestId), unexpected: false };
  logger.error({ err, requestId, method: req.method, path: req.path }, 'unexpected error');
  const internal = new AppError('internal', 'INTERNAL_SERVER_ERROR', 'An unexpected error occurred', {
    suggestion: `If this keeps happening, report it with the request id ${requestId}.`,
  });
  return { status: 500, body: toEnvelope(internal, requestId), unexpected: true };
}

/** `unexpected`: not an error the client caused or was told about (a bug, the database down). */
export type ErrorAnswer = { status: number; body: unknown; unexpected: boolean };

/** express's error handler: `errorAnswer` for every route express serves. */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const failed: FailedRequest = {
      requestId: req.requestId,
      method: req.method,
      path: req.path,
      contentEncoding: req.header('content-encoding'),
      bareErrors: wantsBareErrors(req) && !res.locals.bodyUnreadable,
    };
    const { status, body, unexpected } = errorAnswer(err, failed, logger);
    if (unexpected) res.locals.workRolledBack = certainlyRolledBack(err);
    if (res.headersSent) return;
    prepareErrorAnswer(req, res, err);
    res.status(status).json(body);
  };
}

/**
 * Headers of an error answer: those the error names (`Retry-After`), and `Connection: close` when
 * the request's body was not read (refused before it: a 401, a 413): Node would otherwise read and
 * discard the rest of it to keep the connection, so a client without a key could still make
 * Pigeon take in megabytes.
 */
export function prepareErrorAnswer(req: IncomingMessage, res: ServerResponse, err: unknown): void {
  for (const [name, value] of Object.entries(err instanceof AppError ? (err.extra.headers ?? {}) : {})) {
    res.setHeader(name, value);
  }
  if (!req.complete) res.setHeader('Connection', 'close');
}

/** PostgreSQL's code for a unique violation: two requests raced to create the same thing. */
const UNIQUE_VIOLATION = '23505';

/**
 * What each unique constraint means to the client. Services check before they insert; a request
 * that loses a race with an identical one meets the constraint instead and gets the same 409.
 */
const UNIQUE_MESSAGES: Record<string, string> = {
  users_email_key: 'An account with this email already exists',
  contacts_project_email: 'Another contact of this project already has this email',
  domains_project_domain: 'This project already has this domain',
  segments_project_slug: 'A segment with this name was created at the same moment; try again',
  suppressions_project_email: 'This address is already suppressed',
  invitations_pending: 'This address already has a pending invitation to the project',
  memberships_pkey: 'This user is already a member',
  workflow_transitions_out: 'This way out of the step is already connected',
};

/** PostgreSQL's code for a statement cancelled by statement_timeout. */
const QUERY_CANCELED = '57014';

/** Routes whose metadata asks for the spec's bare `{ error }` 400 get it for every 400, not only schema failures. */
const wantsBareErrors = (req: Request) =>
  (req as { tsRestRoute?: { metadata?: { errorStyle?: string } } }).tsRestRoute?.metadata?.errorStyle === 'bare';

/** Errors from body parsing and the database that have a clear answer for the client. */
function fromKnownError(err: BodyParserError, contentEncoding: string | undefined): AppError | undefined {
  if (err instanceof URIError) {
    // express decodes path parameters; `/contacts/%E0%A4%A` is not percent-encoded UTF-8
    return badRequest('The URL path is not valid percent-encoded UTF-8', {
      suggestion: 'Percent-encode path segments with encodeURIComponent.',
    });
  }
  if (err?.status === 400 && err.type === undefined && contentEncoding) {
    // body-parser passes decompression errors (zlib, brotli) on as a bare 400
    return badRequest(`The request body is not valid ${contentEncoding} data`, {
      suggestion: 'Send Content-Encoding only when the body really is compressed that way.',
    });
  }
  switch (err?.type) {
    case 'entity.parse.failed':
      return new AppError('invalid', 'MALFORMED_JSON', 'The request body is not valid JSON', {
        suggestion: 'Send a JSON document with Content-Type: application/json.',
      });
    case 'entity.too.large':
      return new AppError('too-large', 'PAYLOAD_TOO_LARGE', `The request body is larger than ${err.limit} bytes`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('unsupported-type', 'UNSUPPORTED_MEDIA_TYPE', err.message);
    default:
      if ((err as { constraint?: string })?.constraint === 'contacts_data_limits') {
        return validationFailed(
          [{ field: 'data', message: "the contact's data would exceed 200 keys or 64 KB", code: 'too_big' }],
          "The contact's stored data would exceed its limits",
        );
      }
      if ((err as { code?: string })?.code === UNIQUE_VIOLATION) {
        return conflict(
          UNIQUE_MESSAGES[(err as { constraint?: string }).constraint ?? ''] ??
            'Another request created the same thing at the same moment',
          { suggestion: 'Read the existing one, or send the request again with different values.' },
        );
      }
      if ((err as { code?: string })?.code === QUERY_CANCELED) {
        return new AppError('unavailable', 'QUERY_TIMEOUT', 'The query took too long and was stopped', {
          suggestion: 'Narrow the condition (fewer event filters or segment references) and try again.',
        });
      }
      return err?.status === 404 ? notFound() : undefined;
  }
}
