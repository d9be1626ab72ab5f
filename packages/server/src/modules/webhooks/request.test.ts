import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange, KEPT_POOLS, WebhookPools } from './request.js';

describe('WebhookPools', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('ok'));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('keeps a pool with a live connection and drops idle ones past the bound', async () => {
    const pools = new WebhookPools(4);
    const url = new URL(`http://hook.test:${port}/h`);
    const send = () =>
      exchange({
        url,
        address: '127.0.0.1',
        method: 'POST',
        headers: {},
        body: '{}',
        signal: AbortSignal.timeout(5_000),
        pools,
      });
    expect(await send()).toMatchObject({ status: 200, body: 'ok', bodyError: null });
    const live = pools.get(`http://127.0.0.1:${port}`, {});
    // Pools for addresses never connected to (made, not used) are idle.
    for (let i = 1; i <= KEPT_POOLS + 10; i++) pools.get(`http://127.0.0.${1 + (i % 200)}:${10_000 + i}`, {});
    expect(pools.size).toBeLessThanOrEqual(KEPT_POOLS);
    expect(pools.get(`http://127.0.0.1:${port}`, {})).toBe(live);
    expect(await send()).toMatchObject({ status: 200, body: 'ok' });
    await pools.destroy();
    expect(pools.size).toBe(0);
  });
});
