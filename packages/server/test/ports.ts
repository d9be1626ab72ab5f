import { createServer } from 'node:net';

/** A TCP port that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts something that must know its port before it listens (a PUBLIC_URL naming it) on a port
 * `pick` says is free, and again on another when something took it in between: test files run in
 * parallel, and every outgoing connection takes an ephemeral port from the same range.
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
