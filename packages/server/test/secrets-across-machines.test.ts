import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from './accounts.js';
import { api, bodyOf } from './api.js';
import { runCli, startCli } from './cli.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { createTestDatabase, startTestPigeon, type TestPigeon } from './helpers.js';
import { receivedMessage } from './mail.js';
import { verifiedSender } from './sending.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

/**
 * Two "machines": separate data dirs (so separate secrets.json), one database. Machine A runs the
 * API only; machine B runs the API and the workers, so A's mail is delivered by B.
 */
let sink: SmtpSink;
let dns: TestDnsServer;
let databaseUrl: string;
let machineA: TestPigeon;
const dataDirs: string[] = [];
const newDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-machine-'));
  dataDirs.push(dir);
  return dir;
};

beforeAll(async () => {
  [sink, dns, databaseUrl] = await Promise.all([startSmtpSink(), startDnsServer(), createTestDatabase()]);
  machineA = await startTestPigeon({ role: 'api', databaseUrl, env: { SMTP_URL: sink.url, DNS_SERVERS: dns.address } });
});
afterAll(async () => {
  await machineA?.stop();
  await Promise.all([sink?.close(), dns?.close()]);
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** `pigeon worker` on another machine: its own data dir, the shared database. */
const workerOnAnotherMachine = (env: Record<string, string>) =>
  runCli(['worker'], { PIGEON_DATA_DIR: newDataDir(), DATABASE_URL: databaseUrl, ...env });

describe('secrets across machines sharing one database', () => {
  it('refuses to start a process whose secret differs from the one the database records, naming the variable', async () => {
    const other = 'e5'.repeat(32);
    for (const name of ['SESSION_SECRET', 'LINK_SIGNING_SECRET', 'DATA_ENCRYPTION_KEY']) {
      const run = await workerOnAnotherMachine({ [name]: other });
      expect(run.code, run.stdout).toBe(1);
      expect(run.stderr).toContain(`${name}: differs from the one every other process on this database uses`);
      expect(run.stderr).toContain('pigeon record-secrets');
      expect(run.stderr).not.toContain(other);
    }
  });

  it('refuses secrets generated into the data dir when DATABASE_URL names the database, before touching it', async () => {
    const run = await workerOnAnotherMachine({ SESSION_SECRET: '', LINK_SIGNING_SECRET: '' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('SESSION_SECRET, LINK_SIGNING_SECRET: DATABASE_URL names a database');
    expect(run.stderr).toContain('secrets.json');
  });

  it('after `pigeon record-secrets` with a new value everywhere, the new value starts and the old one is refused', async () => {
    const databaseOfItsOwn = await createTestDatabase();
    const on = (env: Record<string, string>, args = ['worker']) =>
      runCli(args, { PIGEON_DATA_DIR: newDataDir(), DATABASE_URL: databaseOfItsOwn, ...env });
    const rotated = { SESSION_SECRET: 'f6'.repeat(32) };
    expect((await on({}, ['migrate'])).code).toBe(0);
    const first = await on(rotated, ['record-secrets']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('Recorded the fingerprints');
    const old = await on({});
    expect(old.stderr).toContain('SESSION_SECRET: differs');
    const renewed = startCli(['worker'], { PIGEON_DATA_DIR: newDataDir(), DATABASE_URL: databaseOfItsOwn, ...rotated });
    await renewed.ready;
    renewed.child.kill('SIGTERM');
    expect(await renewed.exited).toBe(0);
  });

  it('with the same secrets, mail queued on one machine is signed and delivered by the other, and links and sessions of one work on the other', async () => {
    const machineB = await startTestPigeon({
      role: 'all',
      databaseUrl,
      env: { SMTP_URL: sink.url, DNS_SERVERS: dns.address },
    });
    try {
      // The domain's DKIM key is sealed on A; only B's workers deliver.
      const sender = await verifiedSender(machineA, dns);
      const template = bodyOf(
        await api(machineA, sender.auth).templates.create({
          body: { name: 'news', subject: 'News', body: '<p>Hi</p>', from: sender.from, type: 'MARKETING' },
        }),
        201,
      );
      const sent = bodyOf(
        await api(machineA, sender.auth).emails.send({
          body: { to: 'reader@example.com', template: template.id, subscribed: true },
        }),
        200,
      );
      const message = await receivedMessage(sink, `<${sent.data.emails[0]?.email}@${sender.domain}>`);
      expect(message.headers.get('dkim-signature')).toContain(`d=${sender.domain}`);

      // The unsubscribe link A signed (List-Unsubscribe), followed on B.
      const link = /<(http[^>]+)>/.exec(message.headers.get('list-unsubscribe') ?? '')?.[1] ?? '';
      expect(link).toContain(`${machineA.url}/unsubscribe/`);
      const page = await fetch(link.replace(machineA.url, machineB.url));
      expect(page.status).toBe(200);
      expect(await page.text()).not.toContain('This link is not valid');

      // A session signed by A, used on B.
      const { cookie } = await signUp(machineA);
      const me = await api(machineB, { cookie }).users.me();
      expect(me.status).toBe(200);
    } finally {
      await machineB.stop();
    }
  });
});
