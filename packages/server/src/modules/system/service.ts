import type { ReadinessCheck } from '@pigeon/contract';
import type { Config } from '../../config/index.js';
import { pendingMigrations } from '../../db/migrate.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { readRelayStatuses } from '../../mail/transport-status.js';
import { VERSION } from '../../version.js';
import { feedLag } from '../change-feed/public.js';
import { workerHeartbeats } from './heartbeat.js';

/**
 * Liveness: one primary-key read, which both proves the database answers and reads the mail
 * transport's breaker. A transport that is down does not make the process unhealthy (mail waits).
 */
/**
 * `/health`, answered to anyone: the relay's state without its error text (which names the relay's
 * address and what it said). Members see the text in the project's setup state, operators in
 * `pigeon status` and on the metrics listener's `GET /health` (`withError`).
 */
export async function checkHealth(deps: Pick<AppDeps, 'db' | 'startedAt' | 'relays'>, withError = false) {
  const names = deps.relays.list.map((r) => r.name);
  const statuses = await readRelayStatuses(deps.db.pool, names).catch(() => undefined);
  const relays = statuses?.map((s) => (withError ? s : { ...s, lastError: null }));
  // The first relay of the transactional route, as `mailTransport` was the one transport before.
  const mailTransport = relays?.find((s) => s.transport === deps.relays.system.name);
  const database = mailTransport ? ('up' as const) : ('down' as const);
  return {
    status: database === 'up' ? ('ok' as const) : ('degraded' as const),
    database,
    version: VERSION,
    uptimeSeconds: Math.round((Date.now() - deps.startedAt.getTime()) / 1000),
    ...(mailTransport && { mailTransport, relays }),
  };
}

/** Feature flags of this deployment, for dashboards and SDKs (no authentication). */
export function deploymentConfig(deps: AppDeps) {
  return {
    version: VERSION,
    publicUrl: deps.config.http.publicUrl,
    signupsEnabled: !deps.config.auth.signupsDisabled,
    oauthProviders: deps.config.sso.providers.map((p) => p.id),
    billingEnabled: deps.config.billing.stripe !== undefined,
    storage: 'local' as const,
    mailTransport: deps.relays.system.kind,
    relays: deps.relays.list.map((r) => ({ name: r.name, kind: r.kind })),
    relayRoutes: deps.relays.routes,
    trackingModes: ['ENABLED' as const, 'DISABLED' as const, 'MARKETING_ONLY' as const],
  };
}

/** A database that does not answer within this is unreachable, as far as readiness goes. */
const READY_DATABASE_TIMEOUT_MS = 3000;

type Reason = { check: ReadinessCheck; message: string };

/**
 * Readiness (`/health/ready`, and the `pigeon_ready` gauge): can this Pigeon do its work? The
 * database answers, its schema is this code's, some process running workers beat within three
 * heartbeats (any host: they share the database), and no change-feed consumer lags beyond the limit.
 */
export async function checkReadiness(db: Queryable, config: Config): Promise<{ ready: boolean; reasons: Reason[] }> {
  const reachable = await withTimeout(db.query('SELECT 1'), READY_DATABASE_TIMEOUT_MS).then(
    () => undefined,
    (err: Error) => err.message,
  );
  if (reachable !== undefined) {
    return { ready: false, reasons: [{ check: 'database', message: `database unreachable: ${reachable}` }] };
  }
  const [pending, workers, feed] = await Promise.all([
    pendingMigrations(db),
    workerHeartbeats(db, config.health.heartbeatMs),
    feedLag(db),
  ]);
  const reasons: Reason[] = [];
  if (pending.length > 0) reasons.push({ check: 'migrations', message: `migrations pending: ${pending.join(', ')}` });
  if (!workers.some((w) => w.alive)) {
    reasons.push({
      check: 'workers',
      message: `no worker process alive (none wrote its heartbeat in the last ${(3 * config.health.heartbeatMs) / 1000} s)`,
    });
  }
  const max = config.health.maxFeedLagSeconds;
  for (const f of feed.filter((c) => c.lagSeconds > max)) {
    reasons.push({
      check: 'change_feed',
      message: `change feed consumer ${f.consumer} lags ${Math.round(f.lagSeconds)} s (limit ${max} s)`,
    });
  }
  return { ready: reasons.length === 0, reasons };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
