import { connect, createServer, type Socket } from 'node:net';

export interface HangingRelay {
  url: string;
  /** Connections it took, and how many of them it left hanging. */
  connections: () => number;
  hung: () => number;
  close: () => Promise<void>;
}

/**
 * A relay in front of `sinkPort` that takes TCP connections and, for every `every`-th one, never
 * answers: at once (`at: 'connect'`: no greeting), or once the client has sent `afterBytes` of
 * DATA (`at: 'data'`: the message is cut off before its final dot, nothing more is relayed either
 * way). The others are relayed byte for byte. Sockets it holds are closed with the relay.
 */
export async function startHangingRelay(
  sinkPort: number,
  opts: { every: number; at: 'connect' | 'data'; afterBytes?: number },
): Promise<HangingRelay> {
  const open = new Set<Socket>();
  let count = 0;
  let hung = 0;
  const server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => {});
    count += 1;
    const hang = count % opts.every === 0;
    if (hang && opts.at === 'connect') {
      hung += 1;
      return; // accepted, never answered
    }
    const upstream = connect(sinkPort, '127.0.0.1');
    open.add(upstream);
    upstream.on('close', () => open.delete(upstream));
    upstream.on('error', () => client.destroy());
    upstream.on('data', (d) => {
      if (!stalled) client.write(d);
    });
    let fromClient = 0;
    let inData = false;
    let stalled = false;
    client.on('data', (d) => {
      if (stalled) return;
      if (!inData && /\r\nDATA\r\n|^DATA\r\n/i.test(d.toString('latin1'))) inData = true;
      else if (inData) fromClient += d.length;
      if (hang && inData && fromClient >= (opts.afterBytes ?? 1)) {
        // Part of the message reached the relay; its end never will: from here it is silent.
        stalled = true;
        hung += 1;
        upstream.destroy();
        return;
      }
      upstream.write(d);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `smtp://127.0.0.1:${port}`,
    connections: () => count,
    hung: () => hung,
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
