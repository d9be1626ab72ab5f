import pg from 'pg';
import type { Logger } from '../logger.js';

export type Heard = (payload: string) => void;

/**
 * The process's one LISTEN connection: every loop and cache that wants NOTIFYs subscribes here, so
 * a worker holds one connection for them however many channels it hears. A lost connection is
 * opened again (after `retryMs`) with every channel listened to again; what was notified meanwhile
 * is missed, which the loops' idle polling covers.
 */
export interface ListenHub {
  /** Hears `channel` from now on (the LISTEN has been sent when this resolves). */
  subscribe(channel: string, heard: Heard): Promise<void>;
  stop(): Promise<void>;
}

const CHANNEL_NAME = /^[a-z_][a-z0-9_]*$/;

export async function startListenHub(url: string, logger: Logger, retryMs = 1000): Promise<ListenHub> {
  const listeners = new Map<string, Set<Heard>>();
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  const listenAll = (c: pg.Client) => c.query([...listeners.keys()].map((ch) => `LISTEN ${ch};`).join(' '));

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: url });
    c.on('notification', (n) => {
      for (const heard of listeners.get(n.channel) ?? []) heard(n.payload ?? '');
    });
    c.on('error', (err) => {
      logger.warn({ err }, 'LISTEN connection lost; reconnecting');
      if (client === c) reconnectLater();
    });
    await c.connect();
    if (listeners.size > 0) await listenAll(c);
    client = c;
  }

  function reconnectLater() {
    client?.end().catch(() => {});
    client = undefined;
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (!stopped) connect().catch(reconnectLater);
    }, retryMs);
  }

  await connect();
  return {
    async subscribe(channel, heard) {
      if (!CHANNEL_NAME.test(channel)) throw new Error(`not a channel name: ${channel}`);
      const known = listeners.get(channel);
      if (known) return void known.add(heard);
      listeners.set(channel, new Set([heard]));
      await client?.query(`LISTEN ${channel}`);
    },
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
      client = undefined;
    },
  };
}
