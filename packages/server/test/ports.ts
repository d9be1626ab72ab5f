import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Below this, ports are left to well-known and registered services. */
const LOWEST = 10_000;

/** The ports the kernel gives outgoing connections and `listen(0)` (Linux's default when unreadable). */
export function ephemeralPorts(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low && high) return { low, high };
  } catch {}
  return { low: 32_768, high: 60_999 };
}

/**
 * A TCP port that was free a moment ago, picked at random below the kernel's ephemeral range: an
 * outgoing connection (of this test file or of one running beside it) cannot take it before its
 * user listens, as it could take a port the OS picked. Parallel test files seldom pick the same one;
 * `onFreePort` covers it when they do.
 */
export async function freePort(): Promise<number> {
  const { low } = ephemeralPorts();
  for (let attempt = 0; low > LOWEST && attempt < 50; attempt++) {
    const port = LOWEST + randomInt(low - LOWEST);
    if ((await listenAndClose(port)) === port) return port;
  }
  return listenAndClose(0);
}

/** The port a listen on `port` got (0: the OS picks), closed again; 0 when it was taken. */
function listenAndClose(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(0) : reject(err)));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * Starts something that must know its port before it listens (a PUBLIC_URL naming it) on a port
 * `pick` says is free, and again on another when something took it in between (a test file running
 * beside it that picked the same port).
 */
export async function onFreePort<T>(
  start: (port: number) => Promise<T>,
  { attempts = 3, pick = freePort }: { attempts?: number; pick?: () => Promise<number> } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await pick();
    try {
      return await start(port);
    } catch (err) {
      const taken = /already in use|EADDRINUSE/.test(String((err as Error)?.message));
      if (!taken || attempt >= attempts) throw err;
    }
  }
}
