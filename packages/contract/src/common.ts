import { z } from 'zod';

/** A field-level validation problem (spec §7, `error.errors[]`). */
export const FieldError = z.object({
  field: z.string().describe('Dotted path of the offending field, e.g. `to.0.email`'),
  message: z.string(),
  code: z.string().describe('Machine-readable code, e.g. `invalid_string`, `reserved_event`'),
  received: z.unknown().optional().describe('What was received, when it is safe to echo'),
});

/**
 * Every `error.code` the server answers with. The spec names INVALID_API_KEY, VALIDATION_ERROR,
 * IDEMPOTENCY_KEY_REUSED and INTERNAL_SERVER_ERROR (also the 403 of an unverified sender domain);
 * the rest are Pigeon's. A new code is added here first, so clients can switch over all of them.
 */
export const ErrorCode = z.enum([
  'BAD_REQUEST',
  'MALFORMED_JSON',
  'UNAUTHORIZED',
  'INVALID_API_KEY',
  'INVALID_CREDENTIALS',
  'INVALID_TOKEN',
  'FORBIDDEN',
  'INSUFFICIENT_ROLE',
  'NOT_A_MEMBER',
  'INVITATION_EMAIL_MISMATCH',
  'PROJECT_DISABLED',
  'CAMPAIGNS_PAUSED',
  'SIGNUPS_DISABLED',
  'NOT_FOUND',
  'CONFLICT',
  'IDEMPOTENCY_KEY_REUSED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'VALIDATION_ERROR',
  'INVALID_CONDITION',
  'RATE_LIMIT_EXCEEDED',
  'TOO_MANY_ATTEMPTS',
  'INTERNAL_SERVER_ERROR',
  'QUERY_TIMEOUT',
  'BILLING_LIMIT_EXCEEDED',
  'BILLING_DISABLED',
  'INVALID_SIGNATURE',
  'UPSTREAM_ERROR',
  'STORAGE_QUOTA_EXCEEDED',
  'SERVER_BUSY',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

const errorEnvelope = z.object({
  success: z.literal(false),
  error: z.object({
    code: ErrorCode.describe('Machine-readable error code, e.g. `VALIDATION_ERROR`'),
    message: z.string(),
    statusCode: z.number().int(),
    requestId: z.string().uuid().describe('Also sent as the `X-Request-ID` header'),
    errors: z.array(FieldError).optional(),
    details: z.record(z.unknown()).optional(),
    suggestion: z.string().optional(),
  }),
  message: z.string().describe('A copy of `error.message`, for clients written for Plunk that read it here'),
  timestamp: z.string().datetime(),
});
type ErrorEnvelopeObject = typeof errorEnvelope;
/**
 * The schema's type under a name of its own: every route declares the envelope several times, and
 * declaration files then refer to this interface instead of spelling the whole schema out each time
 * (which made the SDK's bundled .d.ts megabytes larger).
 */
export interface ErrorEnvelopeSchema extends ErrorEnvelopeObject {}
/** The one error envelope every failing endpoint returns (spec §7). */
export const ErrorEnvelope: ErrorEnvelopeSchema = errorEnvelope;
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;
export type FieldError = z.infer<typeof FieldError>;

/** The bare `{ error }` 400 body the spec names for template, segment and contact create. */
export const BareError = z.object({ error: z.string() });

/** `{ success: true, data }` wrapper used by the public `/v1/*` endpoints and campaign create/send. */
export const success = <T extends z.ZodTypeAny>(data: T) => z.object({ success: z.literal(true), data });

export const Timestamp = z.string().datetime().describe('ISO 8601 date-time');

/** Cursor pagination query (spec §2): `limit` default 20, larger values clamped to 100. */
export const CursorQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .default(20)
    .transform((n) => Math.min(n, 100))
    .describe('Page size, default 20; values above 100 are clamped to 100'),
  cursor: z.string().min(1).optional().describe('Opaque cursor from the previous page'),
});

export const cursorPage = <T extends z.ZodTypeAny>(item: T) =>
  z.object({
    data: z.array(item),
    cursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null at the end'),
    hasMore: z.boolean(),
    total: z.number().int().describe('Real only on the first page (no cursor); 0 on later pages'),
  });

/**
 * Where a long list's first page stops counting: below it `total` is exact, at it `total` is this
 * number and `totalCapped` is true (as a search engine's "10,000+"). Counting every row would cost
 * the first page time in proportion to the project's history.
 */
export const LIST_TOTAL_CAP = 10_000;

/** `total` of a list of `things` whose first page counts up to `LIST_TOTAL_CAP`, then caps and flags it. */
export const cappedTotal = (things: string) =>
  z.object({
    total: z
      .number()
      .int()
      .describe(
        `First page (no cursor): how many ${things} match, counted up to ${LIST_TOTAL_CAP.toLocaleString('en-US')} (exact below it; see \`totalCapped\`). 0 on later pages`,
      ),
    totalCapped: z
      .boolean()
      .describe(
        `True when counting stopped at ${LIST_TOTAL_CAP.toLocaleString('en-US')}: at least \`total\` ${things} match. False when \`total\` is exact (and on later pages)`,
      ),
  });

/** A cursor page of a list that can grow with the project's history: its `total` is capped ({@link cappedTotal}). */
export const cappedCursorPage = <T extends z.ZodTypeAny>(item: T, things: string) =>
  cursorPage(item).merge(cappedTotal(things));

/**
 * A value from a fixed list, anything else the default (the spec's list endpoints: "unrecognised
 * falls back").
 * The list is an array, so `__proto__`, `constructor` or `toString` are unrecognised like any
 * other word: nothing is looked up on an object's prototype.
 */
export const knownOrDefault = <T extends string>(allowed: readonly T[], otherwise: T) =>
  z
    .string()
    .optional()
    .transform((v): T => (allowed.includes(v as T) ? (v as T) : otherwise));

/**
 * The highest page number of offset and page-based lists. The spec bounds it only below (>= 1);
 * beyond this a page is 422, not an offset PostgreSQL cannot represent (a 500 before).
 */
export const MAX_PAGE = 1_000_000;

const PageNumber = z.coerce
  .number()
  .int()
  .min(1)
  .max(MAX_PAGE)
  .default(1)
  .describe(`1-based page number, at most ${MAX_PAGE.toLocaleString('en-US')}`);

/** Offset pagination query (spec §2): 1-based `page`, `pageSize` default 20. */
export const OffsetQuery = z.object({
  page: PageNumber,
  pageSize: z.coerce
    .number()
    .int()
    .min(1)
    .default(20)
    .transform((n) => Math.min(n, 100)),
});

export const offsetPage = <T extends z.ZodTypeAny>(item: T) =>
  z.object({
    data: z.array(item),
    page: z.number().int(),
    pageSize: z.number().int(),
    total: z.number().int(),
    totalPages: z.number().int(),
  });

/** Page-based pagination (spec §2, segment members): `pageSize` max 100. */
export const PageQuery = z.object({
  page: PageNumber,
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
});

export const pagePage = <T extends z.ZodTypeAny>(item: T) =>
  z.object({
    data: z.array(item),
    page: z.number().int(),
    pageSize: z.number().int(),
    total: z.number().int(),
  });

/** Error responses every authenticated route can produce. */
/**
 * Typed through interfaces with numeric keys: spread from an `as const` object (readonly keys),
 * TypeScript turned the keys into strings and ts-rest's client left these answers out of every
 * route's response type (`res.status === 422` did not compile).
 */
interface CommonErrors {
  401: typeof ErrorEnvelope;
  422: typeof ErrorEnvelope;
  429: typeof ErrorEnvelope;
  500: typeof ErrorEnvelope;
}
export const commonErrors: CommonErrors = {
  401: ErrorEnvelope,
  422: ErrorEnvelope,
  429: ErrorEnvelope,
  500: ErrorEnvelope,
};

/** Error responses of routes that need no authentication. */
interface PublicErrors {
  400: typeof ErrorEnvelope; // a malformed JSON body: every route parses one when Content-Type says JSON
  500: typeof ErrorEnvelope;
}
export const publicErrors: PublicErrors = { 400: ErrorEnvelope, 500: ErrorEnvelope };

/** Schemas published under `components.schemas` in the OpenAPI document. */
export const commonSchemas = { ErrorCode, FieldError, ErrorEnvelope, BareError };
