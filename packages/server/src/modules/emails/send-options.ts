import { type FieldError, MAX_RECIPIENTS, type Mailbox, SendBody, type SendWarning } from '@pigeon/contract';
import type { z } from 'zod';

type SendInput = z.output<typeof SendBody>;

const KNOWN_FIELDS = new Set(Object.keys(SendBody.shape));

/** Field names other services use, and what Pigeon calls them. */
const OTHER_NAMES: Record<string, string> = {
  html: 'body',
  htmlbody: 'body',
  html_body: 'body',
  content: 'body',
  message: 'body',
  templateid: 'template',
  template_id: 'template',
  replyto: 'reply',
  reply_to: 'reply',
  variables: 'data',
  vars: 'data',
  params: 'data',
  templatedata: 'data',
  template_data: 'data',
  dynamic_template_data: 'data',
  metadata: 'tags',
  textbody: 'text',
  text_body: 'text',
  fromname: 'from',
  from_name: 'from',
};

/** The recipient lists of a send as `{ email, name }` (names null when not given). */
export const mailboxes = (value: Mailbox | Mailbox[] | undefined) =>
  (value === undefined ? [] : Array.isArray(value) ? value : [value]).map((m) => ({
    email: m.email,
    name: m.name ?? null,
  }));

/** More than `MAX_RECIPIENTS` across `to`, `cc` and `bcc` is refused, naming the fields. */
export function recipientLimitError(body: SendInput): FieldError | undefined {
  const count = mailboxes(body.to).length + mailboxes(body.cc).length + mailboxes(body.bcc).length;
  if (count <= MAX_RECIPIENTS) return undefined;
  return {
    field: body.bcc ? 'bcc' : body.cc ? 'cc' : 'to',
    message: `at most ${MAX_RECIPIENTS} recipients across to, cc and bcc (got ${count})`,
    code: 'too_big',
  };
}

/**
 * Fields the schema dropped (as Plunk's API does) are named, with what was probably meant: a
 * did-you-mean for names other services use or near misses, and for anything else a hint that
 * template variables belong in `data`.
 */
export function unknownFieldWarnings(raw: unknown): SendWarning[] {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return [];
  return Object.keys(raw)
    .filter((key) => !KNOWN_FIELDS.has(key))
    .slice(0, 20)
    .map((key) => {
      const meant = OTHER_NAMES[key.toLowerCase()] ?? nearestField(key);
      return {
        code: 'unknown_field',
        field: key,
        message: meant
          ? `\`${key}\` is not a field of /v1/send and was ignored: did you mean \`${meant}\`?`
          : `\`${key}\` is not a field of /v1/send and was ignored (template variables go in \`data\`)`,
      };
    });
}

/** `name` is the sender's display name (Plunk's meaning); with `from.name` it is not used at all. */
export function ignoredFieldWarnings(body: SendInput): SendWarning[] {
  if (body.name !== undefined && body.from?.name) {
    return [
      {
        code: 'ignored_field',
        field: 'name',
        message: '`name` (the sender name) was ignored: `from` already gives one',
      },
    ];
  }
  return [];
}

function nearestField(key: string): string | undefined {
  let best: { field: string; distance: number } | undefined;
  for (const field of KNOWN_FIELDS) {
    const distance = editDistance(key.toLowerCase(), field.toLowerCase());
    if (distance <= 2 && distance < key.length && (!best || distance < best.distance)) best = { field, distance };
  }
  return best?.field;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
