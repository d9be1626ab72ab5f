// CommonJS (`module.exports = parse5322`): Node's ESM sees only the default export.
import emailAddresses from 'email-addresses';
import { z } from 'zod';

/**
 * Options of `POST /v1/send` that integrators from other services expect: addresses as RFC 5322
 * strings with a display name, cc/bcc, tags, warnings and strict mode.
 */

/** At most this many recipients across `to`, `cc` and `bcc` of one message. */
export const MAX_RECIPIENTS = 100;

const Email = z.string().trim().toLowerCase().email().max(254);
const MAILBOX_HINT = 'must be an email address, "Name <email@example.com>", or { "name", "email" }';

/** A mailbox written as one string: `hello@acme.com` or `"Acme, Inc" <hello@acme.com>` (RFC 5322). */
const MailboxString = z
  .string()
  .trim()
  .max(500)
  .transform((text, ctx) => {
    const parsed = text.includes('<') ? emailAddresses.parseOneAddress(text) : null;
    const email = parsed && parsed.type === 'mailbox' ? parsed.address : text;
    const checked = Email.safeParse(email);
    if (!checked.success) {
      ctx.addIssue({ code: z.ZodIssueCode.invalid_string, validation: 'email', message: MAILBOX_HINT });
      return z.NEVER;
    }
    const name = parsed && parsed.type === 'mailbox' ? parsed.name?.trim() : undefined;
    return name ? { email: checked.data, name: name.slice(0, 200) } : { email: checked.data };
  });

const NamedMailbox = z.object({ name: z.string().max(200).optional(), email: Email });

/**
 * An address with an optional display name, in any of the three forms; always `{ email, name? }`
 * once parsed.
 */
export const Mailbox = z
  .union([MailboxString, NamedMailbox])
  .describe('`email@example.com`, `"Name" <email@example.com>` (RFC 5322), or `{ "name", "email" }`');
export type Mailbox = z.output<typeof Mailbox>;

/** One or more mailboxes. */
export const Mailboxes = z.union([Mailbox, z.array(Mailbox).min(1).max(MAX_RECIPIENTS)]);

/** Short key/values stored with each email (find them again in `GET /activity?tag=key:value`). */
export const Tags = z
  .record(
    z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'tag names are 1 to 64 letters, digits, `_` or `-`'),
    z.string().max(256, 'tag values are at most 256 characters'),
  )
  .refine((tags) => Object.keys(tags).length <= 10, 'at most 10 tags')
  .describe('Up to 10 tags: names of letters, digits, `_` and `-` (at most 64), values of at most 256 characters');
export type Tags = z.output<typeof Tags>;

/** What a warning in a send's answer is about. */
export const SendWarningCode = z.enum(['missing_variable', 'unknown_field', 'ignored_field', 'recipient_skipped']);
export type SendWarningCode = z.infer<typeof SendWarningCode>;

export const SendWarning = z.object({
  code: SendWarningCode,
  field: z.string().describe('The request field (or template variable, for `missing_variable`) it is about'),
  message: z.string(),
});
export type SendWarning = z.output<typeof SendWarning>;

/** The options of one message beyond Plunk's fields; spread into `SendBody`. */
export const sendOptionFields = {
  cc: Mailboxes.optional().describe('Copies: each a contact like `to`; counted in the 100-recipient limit'),
  bcc: Mailboxes.optional().describe('Blind copies: in the envelope only; counted in the 100-recipient limit'),
  text: z
    .string()
    .min(1)
    .max(20_000_000)
    .optional()
    .describe('The plain-text part, used as written (variables filled) instead of the one made from the HTML'),
  tags: Tags.optional(),
  strict: z
    .boolean()
    .optional()
    .describe('`true`: refuse with 422 what would otherwise be sent with warnings (nothing is sent)'),
};

/** `key:value` pairs, comma-separated, that an email's tags must all hold (GET /activity's `tag`). */
export const TagFilter = z
  .string()
  .max(1000)
  .transform((text, ctx) => {
    const tags: Record<string, string> = {};
    for (const pair of text.split(',')) {
      const at = pair.indexOf(':');
      if (at < 1) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `\`${pair.slice(0, 80)}\` is not key:value` });
        return z.NEVER;
      }
      tags[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
    }
    return tags;
  })
  .describe('Only activity of emails sent with these tags: `key:value`, comma-separated for several (all must match)');
