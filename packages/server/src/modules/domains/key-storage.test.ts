import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { bodyOf, api as client } from '../../../test/api.js';
import { setDkimPrivateKey } from '../../../test/fixtures/domains.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { until } from '../../../test/until.js';
import { rotateDataKeyCommand } from '../../admin-commands.js';
import { keyId, open } from '../../db/at-rest.js';
import { queryRows, sql } from '../../db/query.js';

// No DATA_ENCRYPTION_KEY: the key comes from (and rotates in) the secrets file of `api`'s data dir.
const FROM_SECRETS_FILE = { DATA_ENCRYPTION_KEY: '', ALLOW_GENERATED_SECRETS: 'true' };

let api: TestPigeon;
beforeAll(async () => {
  api = await startTestPigeon({ role: 'api', env: FROM_SECRETS_FILE });
});
afterAll(() => api?.stop());

const secretsOf = (dataDir: string) => JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8'));
const storedKey = async (domain: string) =>
  (
    await queryRows<{ dkim_private_key: string; dkim_public_key: string; dkim_selector: string }>(
      api.deps.db.pool,
      sql`SELECT dkim_private_key, dkim_public_key, dkim_selector FROM domains WHERE domain = ${domain}`,
    )
  )[0] as { dkim_private_key: string; dkim_public_key: string; dkim_selector: string };

/**
 * Sends one message through a delivering Pigeon on `dataDir` and returns the .eml it wrote. Waits
 * for the delivery's recorded outcome (SENT, with its file): the file's name shows in the outbox
 * as soon as it is created, before its bytes are written.
 */
async function deliveredMail(dataDir: string, auth: Record<string, string>, from: string): Promise<string> {
  const worker = await startTestPigeon({
    databaseUrl: api.deps.db.url,
    env: { ...FROM_SECRETS_FILE, PIGEON_DATA_DIR: dataDir },
  });
  try {
    const sent = await client(worker, auth).emails.send({
      body: { to: 'reader@example.com', from, subject: 'Signed', body: '<p>hello</p>' },
    });
    expect(sent.status).toBe(200);
    const id = bodyOf(sent, 200).data.emails[0]?.email ?? '';
    const outcome = async () =>
      (
        await queryRows<{ status: string; outbox_file: string | null }>(
          api.deps.db.pool,
          sql`SELECT status, outbox_file FROM emails WHERE id = ${id}`,
        )
      )[0];
    const row = await until(outcome, (r) => r?.status === 'SENT');
    expect(row?.status).toBe('SENT');
    expect(row?.outbox_file?.startsWith(join(dataDir, 'outbox'))).toBe(true);
    return readFileSync(row?.outbox_file as string, 'utf8');
  } finally {
    await worker.stop();
  }
}

describe('DKIM private keys at rest', () => {
  it('stores them sealed with AES-256-GCM: the row alone holds no key, and mail is still signed', async () => {
    const { auth } = await newProject(api);
    const domain = `sealed-${Date.now()}.example`;
    expect((await client(api, auth).domains.create({ body: { domain } })).status).toBe(201);
    const row = await storedKey(domain);
    const key = Buffer.from(secretsOf(api.deps.config.dataDir).dataEncryption, 'hex');
    expect(row.dkim_private_key).toMatch(new RegExp(`^enc:v1:${keyId(key)}:`));
    expect(row.dkim_private_key).not.toContain('PRIVATE KEY');
    const pem = open(row.dkim_private_key, { current: key });
    const publicDer = createPublicKey(createPrivateKey(pem)).export({ type: 'spki', format: 'der' });
    expect(publicDer.toString('base64')).toBe(row.dkim_public_key);
    // Tampering is detected (GCM tag), not decrypted into garbage.
    const tampered = `${row.dkim_private_key.slice(0, -6)}AAAAAA`;
    expect(() => open(tampered, { current: key })).toThrow();

    const mail = await deliveredMail(api.deps.config.dataDir, auth, `hello@${domain}`);
    expect(mail).toMatch(new RegExp(`DKIM-Signature:[^]*d=${domain.replace(/\./g, '\\.')};[^]*s=${row.dkim_selector}`));
  });

  it('seals keys stored before encryption at the next start', async () => {
    const { auth } = await newProject(api);
    const domain = `legacy-${Date.now()}.example`;
    await client(api, auth).domains.create({ body: { domain } });
    const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    await setDkimPrivateKey(api.deps.db.pool, domain, pem);
    const restarted = await startTestPigeon({
      databaseUrl: api.deps.db.url,
      role: 'api',
      env: { ...FROM_SECRETS_FILE, PIGEON_DATA_DIR: api.deps.config.dataDir },
    });
    await restarted.stop();
    const stored = (await storedKey(domain)).dkim_private_key;
    expect(stored).toMatch(/^enc:v1:/);
    const key = Buffer.from(secretsOf(api.deps.config.dataDir).dataEncryption, 'hex');
    expect(open(stored, { current: key })).toBe(pem);
  });

  it('pigeon rotate-data-key re-encrypts every key under a new key kept in the secrets file', async () => {
    const { auth } = await newProject(api);
    const domain = `rotated-${Date.now()}.example`;
    await client(api, auth).domains.create({ body: { domain } });
    const dataDir = api.deps.config.dataDir;
    const old = secretsOf(dataDir).dataEncryption;
    const output = await rotateDataKeyCommand(api.deps.config, api.deps.logger, {});
    expect(output).toMatch(/Re-encrypted \d+ DKIM private key/);
    const secrets = secretsOf(dataDir);
    expect(secrets.dataEncryption).not.toBe(old);
    expect(secrets.dataEncryptionPrevious).toBe(old);
    const newKey = Buffer.from(secrets.dataEncryption, 'hex');
    const { rows } = await api.deps.db.pool.query<{ dkim_private_key: string }>('SELECT dkim_private_key FROM domains');
    for (const row of rows) expect(row.dkim_private_key.startsWith(`enc:v1:${keyId(newKey)}:`)).toBe(true);
    // A Pigeon started after the rotation signs with the re-encrypted key.
    const mail = await deliveredMail(dataDir, auth, `hello@${domain}`);
    expect(mail).toContain(`d=${domain};`);
  });

  it('refuses to rotate a key given by DATA_ENCRYPTION_KEY without the new one', async () => {
    const config = { ...api.deps.config, secrets: { ...api.deps.config.secrets } };
    config.secrets.dataEncryption = { current: 'b2'.repeat(32), fromEnvironment: true };
    await expect(rotateDataKeyCommand(config, api.deps.logger, {})).rejects.toThrow(/--new-key/);
  });
});
