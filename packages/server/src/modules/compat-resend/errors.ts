import type { FieldError } from '@pigeon/contract';
import type { ResendError } from '@pigeon/contract/compat';
import type { LayerAnswer, NativeFailure } from '../../kit/layer-answer.js';

/** Pigeon's names of a send's fields, as Resend's body calls them. */
const RESEND_FIELDS: Record<string, string> = {
  body: 'html',
  reply: 'reply_to',
  sendAt: 'scheduled_at',
  contentType: 'content_type',
  firstName: 'first_name',
  lastName: 'last_name',
  data: 'properties',
};

const resendField = (field: string) =>
  field
    .replace(/^messages\./, '')
    .split('.')
    .map((part) => RESEND_FIELDS[part] ?? part)
    .join('.');

const resend = (statusCode: number, name: string, message: string): LayerAnswer => ({
  status: statusCode,
  body: { statusCode, name, message } satisfies ResendError,
});

const isMissing = (e: FieldError) => /^Required/.test(e.message);

/** A refused body in Resend's words: `missing_required_field` or `validation_error`, naming Resend's fields. */
function validation(errors: FieldError[], fallback: string): LayerAnswer {
  const first = errors[0];
  if (!first) return resend(422, 'validation_error', fallback);
  const field = resendField(first.field);
  if (isMissing(first)) return resend(422, 'missing_required_field', `Missing \`${field}\` field.`);
  if (first.code === 'unrecognized_keys') {
    const where = field === '(body)' ? '' : ` in \`${field}\``;
    return resend(422, 'validation_error', `${first.message}${where}: Pigeon refuses fields it would not carry out.`);
  }
  return resend(422, 'validation_error', `Invalid \`${field}\`: ${first.message}`);
}

/**
 * Pigeon's answer in Resend's error shape and names. An Idempotency-Key retry of a request that
 * succeeded answers that request's response again, as Resend does.
 */
export function toResendFailure({ status, error }: NativeFailure): LayerAnswer {
  const details = error.details as { originalResponse?: unknown } | undefined;
  switch (error.code) {
    case 'VALIDATION_ERROR':
      return validation(error.errors ?? [], error.message);
    case 'UNAUTHORIZED':
      return resend(
        401,
        'missing_api_key',
        'Missing API key in the authorization header. Send "Authorization: Bearer sk_…".',
      );
    case 'INVALID_API_KEY':
      return resend(403, 'invalid_api_Key', error.message);
    case 'NOT_FOUND':
      return resend(404, 'not_found', error.message);
    case 'RATE_LIMIT_EXCEEDED':
      return resend(429, 'rate_limit_exceeded', error.message);
    case 'BILLING_LIMIT_EXCEEDED':
      return resend(429, 'monthly_quota_exceeded', error.message);
    case 'IDEMPOTENCY_KEY_REUSED':
      if (status === 422) return resend(409, 'invalid_idempotent_request', error.message);
      if (details?.originalResponse !== undefined) return { status: 200, body: details.originalResponse };
      return resend(409, 'concurrent_idempotent_requests', error.message);
    default:
      if (status >= 500)
        return resend(status, status === 500 ? 'internal_server_error' : 'application_error', error.message);
      return resend(status, status === 405 ? 'method_not_allowed' : 'validation_error', error.message);
  }
}
