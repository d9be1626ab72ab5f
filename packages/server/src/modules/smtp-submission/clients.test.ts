import { execFile, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { authenticate } from 'mailauth';
import { afterAll, describe, expect, it } from 'vitest';
import { api, bodyOf } from '../../../test/api.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { until } from '../../../test/until.js';

// SMTP clients no one here wrote, from Debian (`.ci/run` installs them through scripts/test-deps.sh):
// swaks, msmtp, and Python's smtplib. Each sends one message with STARTTLS and one over implicit TLS.
const has = (command: string, ...args: string[]) => spawnSync(command, args).status === 0;
const clients = {
  swaks: has('swaks', '--version') && has('perl', '-MNet::SSLeay', '-e1'),
  msmtp: has('msmtp', '--version'),
  python3: has('python3', '-c', 'import smtplib, ssl'),
};
const packages = { swaks: 'swaks and libnet-ssleay-perl', msmtp: 'msmtp', python3: 'python3' };
for (const [name, present] of Object.entries(clients)) {
  const needs = packages[name as keyof typeof packages];
  if (!present) console.warn(`SMTP submission with ${name} skipped: ${name} with TLS is not here (Debian: ${needs}).`);
}

/** Runs a client; a failure shows its own account of the dialogue. */
async function run(command: string, args: string[], opts: { timeout: number }) {
  try {
    await promisify(execFile)(command, args, opts);
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${command} failed:\n${stdout?.slice(-3000) ?? ''}\n${stderr?.slice(-2000) ?? ''}`);
  }
}

const { pigeon, sink, dns } = await startMailingPigeon({ SMTP_SUBMISSION_PORT: '0', SMTP_SUBMISSION_TLS_PORT: '0' });
const ports = { starttls: pigeon.submissionPorts?.port ?? 0, implicit: pigeon.submissionPorts?.tlsPort ?? 0 };
/** The self-signed certificate Pigeon generated (PUBLIC_URL's host is localhost: it names 127.0.0.1 too). */
const certFile = join(pigeon.dataDir, 'smtp-submission', 'cert.pem');
const sender = await verifiedSender(pigeon, dns);
const work = mkdtempSync(join(tmpdir(), 'pigeon-smtp-clients-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const resolver = new Resolver();
resolver.setServers([dns.address]);

type Mode = keyof typeof ports;
const ATTACHMENT = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256)).toString('base64');

/** A message with alternative text and HTML parts and an attachment, as a mail program writes one. */
function messageFile(client: string, mode: Mode) {
  const id = `<${randomUUID()}@${client}.test>`;
  const recipients = { to: `to-${client}-${mode}@example.com`, cc: `cc-${client}-${mode}@example.com` };
  const bcc = `bcc-${client}-${mode}@example.com`;
  const text = [
    `From: "Ops" <${sender.from}>`,
    `To: "Ada" <${recipients.to}>`,
    `Cc: ${recipients.cc}`,
    `Bcc: ${bcc}`,
    `Subject: Report from ${client} (${mode})`,
    `Message-ID: ${id}`,
    'Date: Mon, 07 Dec 2026 10:00:00 +0000',
    'X-Report-Kind: nightly',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="outer"',
    '',
    '--outer',
    'Content-Type: multipart/alternative; boundary="inner"',
    '',
    '--inner',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'The nightly report is attached.',
    '--inner',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>The nightly report is attached. <a href="https://example.org/reports">All reports</a></p>',
    '--inner--',
    '--outer',
    'Content-Type: application/octet-stream; name="report.bin"',
    'Content-Disposition: attachment; filename="report.bin"',
    'Content-Transfer-Encoding: base64',
    '',
    ...(ATTACHMENT.match(/.{1,76}/g) ?? []),
    '--outer--',
    '',
  ].join('\r\n');
  const file = join(work, `${client}-${mode}.eml`);
  writeFileSync(file, text);
  return { id, file, envelope: [recipients.to, recipients.cc, bcc] };
}

const send = {
  swaks: async (mode: Mode, file: string, envelope: string[]) => {
    await run(
      'swaks',
      [
        ...['--server', '127.0.0.1', '--port', String(ports[mode])],
        mode === 'starttls' ? '--tls' : '--tls-on-connect',
        ...['--tls-verify', '--tls-ca-path', certFile],
        ...['--auth', 'PLAIN', '--auth-user', 'pigeon', '--auth-password', sender.project.secretKey],
        ...['--from', sender.from, '--to', envelope.join(','), '--data', `@${file}`],
      ],
      { timeout: 30_000 },
    );
  },
  msmtp: async (mode: Mode, file: string, envelope: string[]) => {
    const config = join(work, `msmtp-${mode}.conf`);
    const lines = [
      'account pigeon',
      'host 127.0.0.1',
      `port ${ports[mode]}`,
      'tls on',
      `tls_starttls ${mode === 'starttls' ? 'on' : 'off'}`,
      `tls_trust_file ${certFile}`,
      'auth plain',
      'user pigeon',
      `password ${sender.project.secretKey}`,
      `from ${sender.from}`,
    ];
    writeFileSync(config, `${lines.join('\n')}\n`, { mode: 0o600 });
    await new Promise<void>((resolve, reject) => {
      const child = execFile('msmtp', ['-C', config, '-a', 'pigeon', ...envelope], { timeout: 30_000 }, (err) =>
        err ? reject(err) : resolve(),
      );
      child.stdin?.end(readFileSync(file));
    });
  },
  python3: async (mode: Mode, file: string, envelope: string[]) => {
    const script = [
      'import smtplib, ssl, sys',
      'mode, port, cafile, key, sender, path, *rcpts = sys.argv[1:]',
      'ctx = ssl.create_default_context(cafile=cafile)',
      "if mode == 'starttls':",
      "    s = smtplib.SMTP('127.0.0.1', int(port), timeout=30)",
      '    s.starttls(context=ctx)',
      'else:',
      "    s = smtplib.SMTP_SSL('127.0.0.1', int(port), context=ctx, timeout=30)",
      "s.login('pigeon', key)",
      "refused = s.sendmail(sender, rcpts, open(path, 'rb').read())",
      's.quit()',
      'sys.exit(1 if refused else 0)',
    ].join('\n');
    await run(
      'python3',
      ['-c', script, mode, String(ports[mode]), certFile, sender.project.secretKey, sender.from, file, ...envelope],
      { timeout: 30_000 },
    );
  },
};

describe.each(Object.keys(send) as Array<keyof typeof send>)('SMTP submission with %s', (client) => {
  it.skipIf(!clients[client]).each(['starttls', 'implicit'] as Mode[])(
    'over %s: each recipient gets the message DKIM-signed, as written but for Bcc, and GET /emails lists it',
    async (mode) => {
      const { id, file, envelope } = messageFile(client, mode);
      await send[client](mode, file, envelope);
      const received = await until(
        () => sink.messages.filter((m) => m.messageId === id),
        (found) => found.length === 3,
      );
      expect(received.map((m) => m.to[0]).sort()).toEqual([...envelope].sort());
      for (const message of received) {
        expect(message.to).toHaveLength(1);
        expect(message.raw).toMatch(new RegExp(`^Subject: Report from ${client} \\(${mode}\\)$`, 'm'));
        expect(message.raw).toMatch(/^To: "Ada" <to-.*@example\.com>$/m);
        expect(message.raw).toMatch(/^Cc: cc-.*@example\.com$/m);
        expect(message.raw).not.toMatch(/^Bcc:/im);
        expect(message.raw).toMatch(/^X-Report-Kind: nightly$/m);
        expect(message.raw).toContain('Content-Disposition: attachment; filename="report.bin"');
        expect(message.raw.replace(/\r\n/g, '')).toContain(ATTACHMENT);
        expect(message.raw).toContain('The nightly report is attached.\r\n--inner');
        const { dkim } = await authenticate(message.raw, {
          ip: '127.0.0.1',
          helo: 'localhost',
          sender: sender.from,
          resolver: (name: string, rr: string) => resolver.resolve(name, rr as 'TXT'),
        });
        expect(dkim.results[0]).toMatchObject({ signingDomain: sender.domain, status: { result: 'pass' } });
      }
      const emails = api(pigeon, sender.auth).sentEmails;
      for (const to of envelope) {
        const page = bodyOf(await emails.list({ query: { to } }), 200);
        expect(page.data).toHaveLength(1);
        expect(page.data[0]).toMatchObject({
          subject: `Report from ${client} (${mode})`,
          from: sender.from,
          source: 'TRANSACTIONAL',
        });
      }
    },
    60_000,
  );
});
