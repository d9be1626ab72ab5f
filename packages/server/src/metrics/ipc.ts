import type { ChildProcess } from 'node:child_process';
import type pg from 'pg';
import { type MetricsJson, processMetricsNow } from './process.js';
import { workerScrapeFailures } from './registry.js';

const REQUEST = 'pigeon:metrics-request';
const REPLY = 'pigeon:metrics-reply';

interface Reply {
  type: typeof REPLY;
  id: number;
  metrics: MetricsJson;
}

/**
 * A worker process of `pigeon start` has no listener of its own: the parent asks it over the IPC
 * channel it already has (prom-client's AggregatorRegistry pattern, with node:child_process instead
 * of node:cluster), and it answers with its registry as JSON.
 */
export function answerMetricsRequests(pool: pg.Pool): void {
  process.on('message', (message: { type?: string; id?: number } | null) => {
    if (message?.type !== REQUEST || !process.connected) return;
    void processMetricsNow(pool).then((metrics) => {
      if (process.connected) process.send?.({ type: REPLY, id: message.id ?? 0, metrics } satisfies Reply);
    });
  });
}

let nextId = 1;

/** Each live worker's metrics; one that does not answer within `timeoutMs` is left out of this scrape (and counted). */
export async function askWorkers(children: ChildProcess[], timeoutMs: number): Promise<MetricsJson[]> {
  const answers = await Promise.all(children.map((child) => askOne(child, timeoutMs)));
  return answers.filter((a): a is MetricsJson => a !== undefined);
}

function askOne(child: ChildProcess, timeoutMs: number): Promise<MetricsJson | undefined> {
  const id = nextId++;
  return new Promise((resolve) => {
    const done = (metrics: MetricsJson | undefined) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      if (!metrics) workerScrapeFailures.inc();
      resolve(metrics);
    };
    const onMessage = (message: Reply | null) => {
      if (message?.type === REPLY && message.id === id) done(message.metrics);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    child.on('message', onMessage);
    if (!child.connected) return done(undefined);
    child.send({ type: REQUEST, id }, (err) => {
      if (err) done(undefined);
    });
  });
}
