import type { AppDeps } from '../../deps.js';
import { CachingResolver } from '../../kit/caching-resolver.js';
import { sendWebhook, WEBHOOK_DNS, WebhookPools } from '../webhooks/public.js';
import { signingSecrets } from './endpoints.js';
import type { DeliveryRow, Outcome } from './record.js';

const JSON_BODY = { 'content-type': 'application/json' };

/** An attempt waiting behind its endpoint's open requests, then under way, then over. */
export interface QueuedAttempt {
  readonly row: DeliveryRow;
  /** The attempt's outcome once its request is over; undefined when it was cancelled before it started. */
  readonly outcome: Promise<Outcome | undefined>;
  readonly started: boolean;
  /** Set when the request is over. */
  readonly done: Outcome | undefined;
  /** Takes the attempt out of its queue if it has not started yet; answers whether it did. */
  cancel(): boolean;
}

interface Job extends QueuedAttempt {
  started: boolean;
  done: Outcome | undefined;
  cancelled: boolean;
  settle(outcome: Outcome | undefined): void;
}

interface EndpointQueue {
  active: number;
  waiting: Job[];
  /** When a request of this endpoint last ended, or when it last went from idle to busy. */
  progressAt: number;
}

export interface Sender {
  /** Queues an attempt of `row`; it starts once its endpoint has fewer than `endpointConcurrency` requests open. */
  submit(row: DeliveryRow): QueuedAttempt;
  /** Attempts of the endpoint waiting for a free slot in this process. */
  waiting(endpointId: string): number;
  /** How long the endpoint has had requests open without one ending (0: none open, or one just ended). */
  stalledMs(endpointId: string): number;
  readonly closed: boolean;
  /** Starts nothing more; answers the attempts that were waiting (cancelled). */
  close(): QueuedAttempt[];
  /** Drops the kept-alive connections (after the last request). */
  destroy(): void;
}

/**
 * The event webhook requests of one process: at most `concurrency` open, and each endpoint at most
 * `endpointConcurrency` of them (so a slow or silent endpoint holds a bounded share, each request
 * ending after `timeoutMs`); the others wait in their endpoint's queue. Both the change feed's batches and the claim loop
 * of due deliveries send through it, so they share each endpoint's slots.
 */
export function createSender(deps: AppDeps): Sender {
  const cfg = deps.config.webhooks;
  // A burst to a named endpoint asks DNS once per TTL, not twice per delivery; every attempt still vets the answer.
  const resolver = new CachingResolver({ servers: deps.config.dns.servers, ...WEBHOOK_DNS });
  // Connections are kept per vetted address (the pool's key is the address Pigeon connects to, not
  // the name): a burst to one endpoint does not open a connection per delivery.
  const pools = new WebhookPools(cfg.endpointConcurrency);
  const queues = new Map<string, EndpointQueue>();
  /** Requests open over all endpoints (at most `concurrency`). */
  let open = 0;
  let closed = false;

  const attempt = async (row: DeliveryRow): Promise<Outcome> => {
    const at = deps.clock.now();
    const result = await sendWebhook({
      url: row.url,
      body: row.body,
      headers: JSON_BODY, // the stored payload is JSON: no need to parse it to say so
      webhookId: row.webhook_id,
      secrets: signingSecrets(row, at),
      timeoutMs: cfg.timeoutMs,
      allowPrivateNetworks: cfg.allowPrivateNetworks,
      resolver,
      now: () => deps.clock.now(),
      pools,
    });
    return { row, result, at };
  };

  const pump = (endpointId: string, queue: EndpointQueue) => {
    while (!closed && open < cfg.concurrency && queue.active < cfg.endpointConcurrency && queue.waiting.length > 0) {
      const job = queue.waiting.shift() as Job;
      if (queue.active === 0) queue.progressAt = performance.now();
      queue.active++;
      open++;
      job.started = true;
      void attempt(job.row).then((outcome) => {
        queue.active--;
        open--;
        queue.progressAt = performance.now();
        job.done = outcome;
        // The slot goes to the next attempt before this one's outcome is handled.
        pump(endpointId, queue);
        if (queue.waiting.length === 0) {
          if (queue.active === 0 && queues.get(endpointId) === queue) queues.delete(endpointId);
          pumpOthers();
        }
        job.settle(outcome);
      });
    }
  };
  /** A process-wide slot is free: the endpoints waiting for one get it in turn (each moves to the back). */
  const pumpOthers = () => {
    for (const [endpointId, queue] of [...queues]) {
      if (open >= cfg.concurrency) return;
      if (queue.waiting.length === 0 || queue.active >= cfg.endpointConcurrency) continue;
      queues.delete(endpointId);
      queues.set(endpointId, queue);
      pump(endpointId, queue);
    }
  };

  return {
    submit(row) {
      let settle: (outcome: Outcome | undefined) => void = () => {};
      const outcome = new Promise<Outcome | undefined>((resolve) => {
        settle = resolve;
      });
      const queue = queues.get(row.endpoint_id) ?? { active: 0, waiting: [], progressAt: performance.now() };
      queues.set(row.endpoint_id, queue);
      const job: Job = {
        row,
        outcome,
        started: false,
        done: undefined,
        cancelled: false,
        settle,
        cancel() {
          if (job.started || job.cancelled) return job.cancelled;
          job.cancelled = true;
          queue.waiting.splice(queue.waiting.indexOf(job), 1);
          settle(undefined);
          return true;
        },
      };
      queue.waiting.push(job);
      pump(row.endpoint_id, queue);
      return job;
    },
    waiting: (endpointId) => queues.get(endpointId)?.waiting.length ?? 0,
    stalledMs(endpointId) {
      const queue = queues.get(endpointId);
      return queue && queue.active > 0 ? performance.now() - queue.progressAt : 0;
    },
    get closed() {
      return closed;
    },
    close() {
      closed = true;
      const waiting = [...queues.values()].flatMap((q) => q.waiting.slice());
      for (const job of waiting) job.cancel();
      return waiting;
    },
    destroy() {
      void pools.destroy();
    },
  };
}
