import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ephemeralPorts, freePort, onFreePort } from './ports.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** Listens as Pigeon does, with its error for a port someone else holds. */
const listenOn = (port: number) =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new Error(`PORT ${port} is already in use`) : err),
    );
    server.listen(port, '127.0.0.1', () => {
      servers.push(server);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });

describe('onFreePort', () => {
  it('starts again on another port when the one picked was taken in between', async () => {
    const taken = await listenOn(0);
    const picks = [taken, 0];
    const tried: number[] = [];
    const bound = await onFreePort(
      (port) => {
        tried.push(port);
        return listenOn(port);
      },
      { pick: async () => picks.shift() ?? 0 },
    );
    expect(tried).toEqual([taken, 0]);
    expect(bound).not.toBe(taken);
  });

  it('gives up after its attempts, and at once on any other error', async () => {
    const taken = await listenOn(0);
    let calls = 0;
    const start = (port: number) => {
      calls++;
      return listenOn(port);
    };
    await expect(onFreePort(start, { pick: async () => taken })).rejects.toThrow(`PORT ${taken} is already in use`);
    expect(calls).toBe(3);
    calls = 0;
    await expect(
      onFreePort(
        async () => {
          calls++;
          throw new Error('no database');
        },
        { pick: async () => taken },
      ),
    ).rejects.toThrow('no database');
    expect(calls).toBe(1);
  });
});

describe('freePort', () => {
  it("picks ports below the kernel's ephemeral range, free to listen on", async () => {
    const { low } = ephemeralPorts();
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) expect(port).toBeLessThan(low);
    const port = ports[0] ?? 0;
    expect(await listenOn(port)).toBe(port);
  });
});
