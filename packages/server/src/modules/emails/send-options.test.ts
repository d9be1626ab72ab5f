import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope } from '../../../test/helpers.js';
import { mailOf, receivedMessage } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { queryRows, sql } from '../../db/query.js';

const setup = await startMailingPigeon({ DELIVERY_RETRY_BASE_MS: '100' });

const send = (auth: Record<string, string>, body: unknown, path = '/v1/send', headers = {}) =>
  // untyped: wrong on purpose (the helper also sends bodies the contract's types refuse, to /v1/send and its batch)
  setup.pigeon.request('POST', path, { headers: { ...auth, ...headers }, body });

const emailsOf = async (projectId: string) =>
  await queryRows(
    setup.pigeon.deps.db.pool,
    sql`SELECT to_email, cc, bcc, tags, subject FROM emails WHERE project_id = ${projectId} ORDER BY to_email`,
  );

const contactEmails = async (projectId: string) =>
  (
    await queryRows(
      setup.pigeon.deps.db.pool,
      sql`SELECT email FROM contacts WHERE project_id = ${projectId} ORDER BY email`,
    )
  ).map((r) => r.email);

async function waitForStatus(id: string, statuses: string[]) {
  for (let i = 0; i < 600; i++) {
    const rows = await queryRows(setup.pigeon.deps.db.pool, sql`SELECT status FROM emails WHERE id = ${id}`);
    if (statuses.includes(rows[0]?.status)) return rows[0]?.status;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`email ${id} never reached ${statuses}`);
}

describe('POST /v1/send options', () => {
  it('sends cc in the header and the envelope, bcc in the envelope only, the given text part and display names', async () => {
    const { auth, from, project } = await verifiedSender(setup.pigeon, setup.dns);
    const res = await send(auth, {
      to: '"Lovelace, Ada" <Ada@Example.com>',
      cc: ['Bob Builder <bob@example.com>', { name: 'Cy', email: 'cy@example.com' }],
      bcc: 'dee@example.com',
      from: `Acme Team <${from}>`,
      reply: `"Support \\"desk\\"" <help@${from.split('@')[1]}>`,
      subject: 'Order {{order}}',
      body: '<p>HTML for {{order}}</p>',
      text: 'Plain words for order {{order}}',
      data: { order: { value: '42', persistent: false } },
      tags: { kind: 'receipt', order: '42' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.warnings).toEqual([]);
    expect(res.body.data.emails).toHaveLength(1);
    const message = await mailOf(setup.sink, res.body.data.emails[0].email);
    expect(message.to).toEqual(['ada@example.com', 'bob@example.com', 'cy@example.com', 'dee@example.com']);
    const parsed = await simpleParser(message.raw);
    expect(parsed.from?.value).toEqual([{ name: 'Acme Team', address: from }]);
    expect(parsed.to).toMatchObject({ value: [{ name: 'Lovelace, Ada', address: 'ada@example.com' }] });
    expect(parsed.cc).toMatchObject({
      value: [
        { name: 'Bob Builder', address: 'bob@example.com' },
        { name: 'Cy', address: 'cy@example.com' },
      ],
    });
    expect(parsed.bcc).toBeUndefined();
    expect(message.raw).not.toContain('dee@example.com');
    expect(parsed.replyTo?.value).toEqual([{ name: 'Support "desk"', address: `help@${from.split('@')[1]}` }]);
    expect(parsed.text?.trim()).toBe('Plain words for order 42');
    expect(parsed.html).toContain('HTML for 42');
    // Copies are contacts like `to`; the tags stay with the email.
    expect(await contactEmails(project.id)).toEqual([
      'ada@example.com',
      'bob@example.com',
      'cy@example.com',
      'dee@example.com',
    ]);
    const [stored] = await emailsOf(project.id);
    expect(stored).toMatchObject({
      to_email: 'ada@example.com',
      tags: { kind: 'receipt', order: '42' },
      bcc: [{ email: 'dee@example.com', name: null }],
    });
    // Found again by tag where emails' activity is listed.
    const emailId = res.body.data.emails[0].email;
    await waitForStatus(emailId, ['SENT']);
    const other = await send(auth, { to: 'eve@example.com', from, subject: 's', body: 'b', tags: { kind: 'other' } });
    await waitForStatus(other.body.data.emails[0].email, ['SENT']);
    const activity = async (tag: string) =>
      bodyOf(await api(setup.pigeon, auth).activity.list({ query: { types: 'email.sent', tag } }), 200);
    expect((await activity('kind:receipt')).data.map((a) => a.emailId)).toEqual([emailId]);
    expect((await activity('kind:receipt,order:42')).data).toHaveLength(1);
    expect((await activity('kind:receipt,order:43')).data).toHaveLength(0);
    expect((await activity('kind:other')).data).toHaveLength(1);
    expectEnvelope(await api(setup.pigeon, auth).activity.list({ query: { tag: 'receipt' } }), 422, 'VALIDATION_ERROR');
  });

  it('refuses bad addresses, tags and more than 100 recipients with a message naming the field', async () => {
    const { auth, from, project } = await verifiedSender(setup.pigeon, setup.dns);
    const base = { from, subject: 's', body: 'b' };
    const cases: Array<[unknown, RegExp]> = [
      [{ ...base, to: 'Ada <not-an-address>' }, /^to: must be an email address, "Name <email@example.com>"/],
      [{ ...base, to: 'a@example.com', cc: ['ok@example.com', 'nope'] }, /^cc\.1: must be an email address/],
      [{ ...base, to: 'a@example.com', from: 'Team <x@>' }, /^from: must be an email address/],
      [{ ...base, to: 'a@example.com', tags: { 'bad key': 'x' } }, /^tags\.bad key: tag names are 1 to 64/],
      [{ ...base, to: 'a@example.com', tags: { k: 'v'.repeat(257) } }, /^tags\.k: tag values are at most 256/],
      [{ ...base, to: 'a@example.com', strict: 'yes' }, /^strict: Expected boolean/],
      [
        {
          ...base,
          to: Array.from({ length: 60 }, (_, i) => `t${i}@example.com`),
          cc: Array.from({ length: 41 }, (_, i) => `c${i}@example.com`),
        },
        /^cc: at most 100 recipients across to, cc and bcc \(got 101\)/,
      ],
    ];
    for (const [body, message] of cases) {
      const error = expectEnvelope(await send(auth, body), 422, 'VALIDATION_ERROR');
      expect(error.message).toMatch(message);
      expect(error.errors?.length).toBeGreaterThan(0);
    }
    expect(await emailsOf(project.id)).toEqual([]);
    expect(await contactEmails(project.id)).toEqual([]);
  });
});

describe('warnings and strict mode', () => {
  it('warns about empty variables, unknown fields (with a did-you-mean), Plunk-style top-level variables and skipped copies', async () => {
    const { auth, from, project } = await verifiedSender(setup.pigeon, setup.dns);
    // A hard bounce suppresses the address, so the next copy to it is skipped.
    setup.sink.failNext(550);
    const bounced = await send(auth, { to: 'gone@example.com', from, subject: 's', body: 'b' });
    await waitForStatus(bounced.body.data.emails[0].email, ['BOUNCED']);

    const body = {
      to: 'ada@example.com',
      cc: 'gone@example.com',
      from,
      subject: 'Hi {{firstName}}',
      html: '<p>ignored</p>',
      body: '<p>Hi {{firstName}}, {{plan ?? "free"}} plan, code {{code}}</p>',
      firstName: 'Ada',
      data: { code: 'X1' },
    };
    const res = await send(auth, body);
    expect(res.status).toBe(200);
    const warnings = res.body.data.warnings as Array<{ code: string; field: string; message: string }>;
    expect(warnings.map((w) => [w.code, w.field])).toEqual([
      ['unknown_field', 'html'],
      ['unknown_field', 'firstName'],
      ['missing_variable', 'firstName'],
      ['recipient_skipped', 'gone@example.com'],
    ]);
    expect(warnings[0]?.message).toContain('did you mean `body`?');
    expect(warnings[2]?.message).toContain('sent at the top level');
    expect(res.body.data.skipped).toMatchObject([{ contact: { email: 'gone@example.com' }, reason: 'suppressed' }]);
    const sentTo = (await emailsOf(project.id)).map((e) => [e.to_email, e.subject, e.cc]);
    expect(sentTo).toContainEqual(['ada@example.com', 'Hi ', null]);

    // strict: the same request is refused, naming each warning, and nothing more is stored.
    const strict = expectEnvelope(await send(auth, { ...body, strict: true }), 422, 'VALIDATION_ERROR');
    expect(strict.message).toMatch(/^html: `html` is not a field of \/v1\/send and was ignored: did you mean `body`\?/);
    expect(strict.errors?.map((e) => e.code)).toEqual([
      'strict_unknown_field',
      'strict_unknown_field',
      'strict_missing_variable',
      'strict_recipient_skipped',
    ]);
    expect(await emailsOf(project.id)).toHaveLength(2);

    // A near miss is named too; a clean strict send goes through.
    const typo = await send(auth, { to: 'ada@example.com', from, subject: 's', body: 'b', tgas: { a: 'b' } });
    expect(typo.body.data.warnings[0].message).toContain('did you mean `tags`?');
    const clean = await send(auth, { to: 'ada@example.com', from, subject: 's', body: 'b', strict: true });
    expect(clean.status).toBe(200);
    expect(clean.body.data.warnings).toEqual([]);
  });
});

describe('POST /v1/send/batch', () => {
  it('sends up to 100 different messages with per-message results, and one key for the batch', async () => {
    const { auth, from, project } = await verifiedSender(setup.pigeon, setup.dns);
    const messages = [
      { to: 'one@example.com', from, subject: 'First', body: '<p>1</p>', tags: { n: '1' } },
      { to: ['two@example.com', 'three@example.com'], from, subject: 'Second {{x}}', body: '<p>2</p>' },
    ];
    const headers = { 'idempotency-key': 'batch-1' };
    const res = await send(auth, { messages }, '/v1/send/batch', headers);
    expect(res.status).toBe(200);
    const { results } = res.body.data;
    expect(results).toHaveLength(2);
    expect(results[0].emails.map((e: { contact: { email: string } }) => e.contact.email)).toEqual(['one@example.com']);
    expect(results[1].emails).toHaveLength(2);
    expect(results[1].warnings).toMatchObject([{ code: 'missing_variable', field: 'x' }]);
    // By Message-ID: mail of the test before (not waited for there) may reach the sink meanwhile.
    const messageIds = results.flatMap((r: { emails: Array<{ email: string }> }) =>
      r.emails.map((e) => `<${e.email}@${from.split('@')[1]}>`),
    );
    await Promise.all(messageIds.map((id: string) => receivedMessage(setup.sink, id)));
    const received = setup.sink.messages.filter((m) => m.messageId && messageIds.includes(m.messageId));
    expect(received.map((m) => m.to[0]).sort()).toEqual(['one@example.com', 'three@example.com', 'two@example.com']);

    const again = await send(auth, { messages }, '/v1/send/batch', headers);
    expect(again.status).not.toBe(200);
    expect(await emailsOf(project.id)).toHaveLength(3);
    const [first] = await emailsOf(project.id);
    expect(first?.tags).toEqual({ n: '1' });
  });

  it('is all or nothing: one bad message answers its errors under messages.<i> and nothing is sent', async () => {
    const { auth, from, project } = await verifiedSender(setup.pigeon, setup.dns);
    const good = { to: 'ok@example.com', from, subject: 's', body: 'b' };
    const noSubject = expectEnvelope(
      await send(auth, { messages: [good, { to: 'x@example.com', from, body: 'b' }] }, '/v1/send/batch'),
      422,
      'VALIDATION_ERROR',
    );
    expect(noSubject.message).toBe('messages.1.subject: Required unless a template gives it');
    const unverified = expectEnvelope(
      await send(auth, { messages: [good, { ...good, from: 'me@unverified.example' }] }, '/v1/send/batch'),
      403,
      'INTERNAL_SERVER_ERROR',
    );
    expect(unverified.message).toMatch(/^messages\.1: /);
    const strict = expectEnvelope(
      await send(auth, { messages: [good, { ...good, subject: '{{nope}}', strict: true }] }, '/v1/send/batch'),
      422,
      'VALIDATION_ERROR',
    );
    expect(strict.errors?.[0]).toMatchObject({ field: 'messages.1.(body)', code: 'strict_missing_variable' });
    const tooMany = expectEnvelope(
      await send(auth, { messages: Array.from({ length: 101 }, () => good) }, '/v1/send/batch'),
      422,
      'VALIDATION_ERROR',
    );
    expect(tooMany.message).toMatch(/^messages: /);
    expect(await emailsOf(project.id)).toEqual([]);
  });
});
