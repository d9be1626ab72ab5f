import { afterEach, describe, expect, it } from 'vitest';
import { api, bodyOf } from '../../../test/api.js';
import { mailOf } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';

// A relay that refuses some recipients at RCPT TO still takes the message for the others. The email
// row stands for the message to its `to` recipient (ARCHITECTURE.md, "Refused copies").
const setup = await startMailingPigeon();
const refused: string[] = [];
afterEach(() => {
  for (const address of refused.splice(0)) setup.sink.refuseRcpt(address, null);
});
const refuse = (address: string) => {
  refused.push(address);
  setup.sink.refuseRcpt(address, 550);
};

async function sendAndSettle(to: string, cc: string[]) {
  const { auth, from } = await verifiedSender(setup.pigeon, setup.dns);
  const client = api(setup.pigeon, auth);
  const res = await client.emails.send({ body: { to, cc, from, subject: 'Hello', body: '<p>Hi</p>' } });
  expect(res.status).toBe(200);
  const id = bodyOf(res, 200).data.emails[0]?.email ?? '';
  const message = await mailOf(setup.sink, id);
  for (let i = 0; i < 400; i++) {
    const email = bodyOf(await client.sentEmails.get({ params: { id } }), 200);
    if (email.status !== 'QUEUED' && email.status !== 'SENDING') return { email, message };
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`email ${id} was never settled`);
}

describe('recipients refused at RCPT', () => {
  it('a refused cc leaves the email delivered to its recipient, the refusal named in lastError', async () => {
    refuse('gone-cc@example.com');
    const { email, message } = await sendAndSettle('ada@example.com', ['gone-cc@example.com', 'bob@example.com']);
    expect(message.to).toEqual(['ada@example.com', 'bob@example.com']);
    expect(email.status).toBe('DELIVERED');
    expect(email.deliveredAt).not.toBeNull();
    expect(email.bouncedAt).toBeNull();
    expect(email.lastError).toMatch(/^refused at RCPT: gone-cc@example\.com \(550 No such user here\)$/);
  });

  it('a refused to is the email’s hard bounce even though its copies went out', async () => {
    refuse('gone-to@example.com');
    const { email, message } = await sendAndSettle('gone-to@example.com', ['cy@example.com']);
    expect(message.to).toEqual(['cy@example.com']);
    expect(email.status).toBe('BOUNCED');
    expect(email.lastError).toMatch(/550 No such user here/);
  });

  it('with every recipient accepted, lastError stays empty', async () => {
    const { email } = await sendAndSettle('dee@example.com', ['eve@example.com']);
    expect(email.status).toBe('DELIVERED');
    expect(email.lastError).toBeNull();
  });
});
