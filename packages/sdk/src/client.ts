import { contract } from './contract.js';
import { type RequestOptions, Transport } from './transport.js';
import type { DeploymentConfig, Health } from './types.js';

export interface PigeonOptions {
  /** A secret key (`sk_…`, server-side only) or a public key (`pk_…`, `events.track` only). */
  apiKey: string;
  /** Default `http://localhost:3000`. May include a path prefix. */
  baseUrl?: string;
  /** Default `globalThis.fetch`, looked up at call time. */
  fetch?: typeof fetch;
  /** Retries after the first attempt, default 3. */
  maxRetries?: number;
  /** Timeout of each attempt, default 30 000 ms. */
  timeoutMs?: number;
  /** First backoff delay, doubled on each retry (with jitter); default 500 ms. */
  retryBaseDelayMs?: number;
  /** Ceiling of the backoff delay, default 8 000 ms. `Retry-After` is honoured up to 60 s. */
  retryMaxDelayMs?: number;
}

/**
 * The Pigeon API client. Each namespace method wraps one contract route:
 * `(…, options) => this.transport.call(contract.x.y, { params, query, body }, options)`.
 * Methods that send an Idempotency-Key pass `withIdempotencyKey(options)` instead of `options`,
 * so all retries of one call reuse one generated key.
 */
export class Pigeon {
  private readonly transport: Transport;

  readonly system = {
    /** Liveness and database reachability (no authentication needed). */
    health: (options?: RequestOptions): Promise<Health> => this.transport.call(contract.system.health, {}, options),
    /** The deployment's feature flags and public URLs (no authentication needed). */
    config: (options?: RequestOptions): Promise<DeploymentConfig> =>
      this.transport.call(contract.system.config, {}, options),
  };

  constructor(options: PigeonOptions) {
    if (!options?.apiKey) throw new TypeError('Pigeon: `apiKey` is required');
    this.transport = new Transport({
      apiKey: options.apiKey,
      baseUrl: (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, ''),
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      maxRetries: options.maxRetries ?? 3,
      timeoutMs: options.timeoutMs ?? 30_000,
      retryBaseDelayMs: options.retryBaseDelayMs ?? 500,
      retryMaxDelayMs: options.retryMaxDelayMs ?? 8_000,
    });
  }
}
