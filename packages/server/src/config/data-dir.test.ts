import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signUp } from '../../test/accounts.js';
import { startTestPigeon, type TestPigeon } from '../../test/helpers.js';
import { until } from '../../test/until.js';

const mode = (path: string) => statSync(path).mode & 0o777;

describe('data dir permissions', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pigeon-perms-'));
  let pigeon: TestPigeon | undefined;
  afterAll(async () => {
    await pigeon?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('narrows what an older Pigeon left readable at start, and writes new outbox mail 0600 in a 0700 dir', async () => {
    chmodSync(dataDir, 0o755);
    const outbox = join(dataDir, 'outbox');
    mkdirSync(outbox, { mode: 0o755 });
    chmodSync(outbox, 0o755);
    writeFileSync(join(outbox, 'old.eml'), 'Token: secret', { mode: 0o644 });
    writeFileSync(join(dataDir, 'secrets.json'), '{}', { mode: 0o644 });
    chmodSync(join(dataDir, 'secrets.json'), 0o644);

    pigeon = await startTestPigeon({ env: { PIGEON_DATA_DIR: dataDir } });
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(outbox)).toBe(0o700);
    expect(mode(join(outbox, 'old.eml'))).toBe(0o600);
    expect(mode(join(dataDir, 'secrets.json'))).toBe(0o600);

    await signUp(pigeon); // mails a verification token through the outbox
    // Only whole messages: a .eml.partial is renamed while the transport finishes it.
    const written = await until(
      () => readdirSync(outbox).filter((f) => f !== 'old.eml' && f.endsWith('.eml')),
      (files) => files.length > 0,
    );
    expect(written.length).toBeGreaterThan(0);
    for (const file of written) expect(mode(join(outbox, file)), file).toBe(0o600);
  });

  it('keeps an embedded PostgreSQL reachable when started with DATABASE_URL (a worker process of `pigeon start`)', async () => {
    const shared = mkdtempSync(join(tmpdir(), 'pigeon-perms-worker-'));
    mkdirSync(join(shared, 'postgres'), { mode: 0o700 });
    writeFileSync(join(shared, 'postgres', 'PG_VERSION'), '18\n');
    chmodSync(shared, 0o711);
    const worker = await startTestPigeon({ env: { PIGEON_DATA_DIR: shared }, role: 'worker' });
    try {
      // As root the `postgres` user must still pass through to its directory.
      expect(mode(shared)).toBe(process.getuid?.() === 0 ? 0o711 : 0o700);
    } finally {
      await worker.stop();
      rmSync(shared, { recursive: true, force: true });
    }
  });
});
