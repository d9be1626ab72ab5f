import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './index.js';

const dirs: string[] = [];
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-config-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({ PIGEON_DATA_DIR: dataDir() });
    expect(config.http).toEqual({
      port: 3000,
      host: '0.0.0.0',
      publicUrl: 'http://localhost:3000',
      publicUrlGiven: false,
      keepAliveSeconds: 72,
      trustProxy: ['loopback'],
      maxConnections: 4096,
      bodies: { largeBodySlots: 2, largeBodyWaitMs: 30_000 },
      consoleDir: undefined,
    });
    expect(config.apiMaxOldSpaceMb).toBe(768);
    expect(config.database.url).toBeUndefined();
    expect(config.mail.smtpUrl).toBeUndefined();
    expect(config.log.level).toBe('info');
    expect(config.auth.signupsDisabled).toBe(false);
    expect(config.webhooks.allowPrivateNetworks).toBe(false);
    expect(config.apiHeapGrowingPercent).toBe(50);
    expect(config.delivery.claimBatch).toBe(10);
  });

  it('reads TRUST_PROXY as false, a hop count or addresses, and refuses true and anything else', () => {
    const trust = (value: string) => loadConfig({ PIGEON_DATA_DIR: dataDir(), TRUST_PROXY: value }).http.trustProxy;
    expect(trust('false')).toBe(false);
    expect(trust('2')).toBe(2);
    expect(trust('loopback, 10.0.0.0/8,2001:db8::/32')).toEqual(['loopback', '10.0.0.0/8', '2001:db8::/32']);
    for (const bad of ['true', '10.0.0.0/33', 'proxy.example.com', '1.2.3']) {
      expect(() => trust(bad), bad).toThrow(/TRUST_PROXY/);
    }
  });

  it('reads WEBHOOK_ALLOW_PRIVATE_NETWORKS as a boolean', () => {
    const on = loadConfig({ PIGEON_DATA_DIR: dataDir(), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    expect(on.webhooks.allowPrivateNetworks).toBe(true);
    expect(() => loadConfig({ PIGEON_DATA_DIR: dataDir(), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'sure' })).toThrow(
      /WEBHOOK_ALLOW_PRIVATE_NETWORKS/,
    );
  });

  it('names every bad variable in one error', () => {
    try {
      loadConfig({
        PIGEON_DATA_DIR: dataDir(),
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        LOG_LEVEL: 'loud',
        DELIVERY_CLAIM_BATCH: '0',
      });
      expect.unreachable('loadConfig accepted bad values');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      expect(message).toContain('PORT');
      expect(message).toContain('DATABASE_URL');
      expect(message).toContain('LOG_LEVEL');
      expect(message).toContain('DELIVERY_CLAIM_BATCH');
    }
  });

  it('generates secrets once and keeps them in the data dir', () => {
    const dir = dataDir();
    const first = loadConfig({ PIGEON_DATA_DIR: dir });
    const second = loadConfig({ PIGEON_DATA_DIR: dir });
    expect(first.secrets.session).toHaveLength(64);
    expect(second.secrets).toEqual(first.secrets);
    expect(existsSync(join(dir, 'secrets.json'))).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8')).session).toBe(first.secrets.session);
  });

  it('prefers secrets given in the environment', () => {
    const secret = 's'.repeat(40);
    const config = loadConfig({ PIGEON_DATA_DIR: dataDir(), SESSION_SECRET: secret });
    expect(config.secrets.session).toBe(secret);
    expect(() => loadConfig({ PIGEON_DATA_DIR: dataDir(), SESSION_SECRET: 'short' })).toThrow(/SESSION_SECRET/);
  });

  it('derives the public URL from PORT and strips a trailing slash from PUBLIC_URL', () => {
    expect(loadConfig({ PIGEON_DATA_DIR: dataDir(), PORT: '8080' }).http.publicUrl).toBe('http://localhost:8080');
    const config = loadConfig({ PIGEON_DATA_DIR: dataDir(), PUBLIC_URL: 'https://mail.example.com/' });
    expect(config.http.publicUrl).toBe('https://mail.example.com');
  });

  it('parses DNS_SERVERS and boolean flags', () => {
    const config = loadConfig({
      PIGEON_DATA_DIR: dataDir(),
      DNS_SERVERS: '127.0.0.1:5353,10.0.0.2',
      DISABLE_SIGNUPS: 'true',
    });
    expect(config.dns.servers).toEqual(['127.0.0.1:5353', '10.0.0.2']);
    expect(config.auth.signupsDisabled).toBe(true);
    expect(() => loadConfig({ PIGEON_DATA_DIR: dataDir(), DNS_SERVERS: 'dns.google' })).toThrow(/DNS_SERVERS/);
  });

  it('runs one worker process per core but one by default; 0 means a single process', () => {
    const cores = availableParallelism();
    expect(loadConfig({ PIGEON_DATA_DIR: dataDir() }).workerProcesses).toBe(Math.max(1, cores - 1));
    expect(loadConfig({ PIGEON_DATA_DIR: dataDir(), WORKER_PROCESSES: '0' }).workerProcesses).toBe(0);
    expect(loadConfig({ PIGEON_DATA_DIR: dataDir(), WORKER_PROCESSES: '3' }).workerProcesses).toBe(3);
    expect(() => loadConfig({ PIGEON_DATA_DIR: dataDir(), WORKER_PROCESSES: '-1' })).toThrow(/WORKER_PROCESSES/);
    expect(() => loadConfig({ PIGEON_DATA_DIR: dataDir(), WORKER_PROCESSES: 'all' })).toThrow(/WORKER_PROCESSES/);
  });

  it('runs retention every 15 minutes with 24-hour days unless told otherwise (a soak shortens both)', () => {
    expect(loadConfig({ PIGEON_DATA_DIR: dataDir() }).retention).toEqual({ intervalMinutes: 15, dayMs: 86_400_000 });
    const soak = loadConfig({
      PIGEON_DATA_DIR: dataDir(),
      RETENTION_INTERVAL_MINUTES: '1',
      RETENTION_DAY_SECONDS: '300',
    });
    expect(soak.retention).toEqual({ intervalMinutes: 1, dayMs: 300_000 });
    expect(() => loadConfig({ PIGEON_DATA_DIR: dataDir(), RETENTION_DAY_SECONDS: '59' })).toThrow(
      /RETENTION_DAY_SECONDS/,
    );
    expect(() => loadConfig({ PIGEON_DATA_DIR: dataDir(), RETENTION_INTERVAL_MINUTES: '0' })).toThrow(
      /RETENTION_INTERVAL_MINUTES/,
    );
  });

  it('stores images locally by default, in S3 when a bucket is named; credentials come as a pair', () => {
    const dir = dataDir();
    const local = loadConfig({ PIGEON_DATA_DIR: dir });
    expect(local.uploads).toEqual({ quotaBytes: 100 * 1024 * 1024, localDir: join(dir, 'uploads'), s3: undefined });
    const s3 = loadConfig({
      PIGEON_DATA_DIR: dir,
      UPLOADS_QUOTA_MB: '5',
      UPLOADS_S3_BUCKET: 'images',
      UPLOADS_S3_ENDPOINT: 'http://minio:9000',
      UPLOADS_S3_FORCE_PATH_STYLE: 'true',
      UPLOADS_S3_PREFIX: 'pigeon/',
      UPLOADS_S3_ACCESS_KEY_ID: 'id',
      UPLOADS_S3_SECRET_ACCESS_KEY: 'secret',
    });
    expect(s3.uploads).toMatchObject({
      quotaBytes: 5 * 1024 * 1024,
      s3: {
        bucket: 'images',
        region: 'us-east-1',
        endpoint: 'http://minio:9000',
        forcePathStyle: true,
        prefix: 'pigeon/',
        credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
      },
    });
    expect(() =>
      loadConfig({ PIGEON_DATA_DIR: dir, UPLOADS_S3_BUCKET: 'images', UPLOADS_S3_ACCESS_KEY_ID: 'id' }),
    ).toThrow(ConfigError);
    expect(() => loadConfig({ PIGEON_DATA_DIR: dir, UPLOADS_QUOTA_MB: '0' })).toThrow(/UPLOADS_QUOTA_MB/);
  });
});
