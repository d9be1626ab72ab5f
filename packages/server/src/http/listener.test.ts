import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { api } from '../../test/api.js';
import { createTestDatabase, startTestPigeon, type TestPigeon } from '../../test/helpers.js';

/** Issue 57, item 4: the listener's bounds and whom it believes about client addresses. */

const started: TestPigeon[] = [];
afterAll(() => Promise.all(started.map((p) => p.stop())));

async function pigeonWith(env: Record<string, string>) {
  const pigeon = await startTestPigeon({ role: 'api', databaseUrl: await createTestDatabase(), env });
  started.push(pigeon);
  return pigeon;
}

/** A socket that has been accepted (it answered a request), left open. */
function openConnection(url: string): Promise<{ socket: Socket; answered: boolean }> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answered = false;
    socket.on('data', (d) => {
      if (!answered && d.toString().startsWith('HTTP/1.1 200')) {
        answered = true;
        resolve({ socket, answered });
      }
    });
    socket.on('close', () => resolve({ socket, answered }));
    socket.on('error', () => {});
    socket.write(`GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
  });
}

describe('the HTTP listener', () => {
  it('closes connections past HTTP_MAX_CONNECTIONS at once, and takes new ones once others close', async () => {
    const pigeon = await pigeonWith({ HTTP_MAX_CONNECTIONS: '3' });
    const held = await Promise.all([1, 2, 3].map(() => openConnection(pigeon.url)));
    expect(held.map((c) => c.answered)).toEqual([true, true, true]);
    const refused = await openConnection(pigeon.url);
    expect(refused.answered).toBe(false);
    held[0]?.socket.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const later = await openConnection(pigeon.url);
    expect(later.answered).toBe(true);
    for (const c of [...held, later]) c.socket.destroy();
  });

  /** Eleven password-reset requests, one after another (10 per client IP are allowed in 15 minutes). */
  const resetRequests = async (pigeon: TestPigeon, forwardedFor: (i: number) => string) => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await api(pigeon, { 'x-forwarded-for': forwardedFor(i) }).auth.requestPasswordReset({
        body: { email: `nobody${i}@example.com` },
      });
      statuses.push(res.status);
    }
    return statuses;
  };

  it('believes X-Forwarded-For from loopback proxies by default: clients behind it are told apart', async () => {
    const pigeon = await pigeonWith({});
    const statuses = await resetRequests(pigeon, (i) => `203.0.113.${i + 1}`);
    expect(statuses.filter((s) => s === 429)).toEqual([]); // 10 per IP: each of these is one
    const same = await resetRequests(pigeon, () => '198.51.100.7');
    expect(same.filter((s) => s === 429)).toHaveLength(1);
  });

  it('with TRUST_PROXY=false, a client cannot choose its address with a header', async () => {
    const pigeon = await pigeonWith({ TRUST_PROXY: 'false' });
    const statuses = await resetRequests(pigeon, (i) => `203.0.113.${i + 1}`);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1); // all from 127.0.0.1: the 11th is refused
  });

  it('with TRUST_PROXY naming another proxy, loopback is not believed', async () => {
    const pigeon = await pigeonWith({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.1' });
    const statuses = await resetRequests(pigeon, (i) => `203.0.113.${i + 1}`);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
  });
});
