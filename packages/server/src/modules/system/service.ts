import type { AppDeps } from '../../deps.js';
import { VERSION } from '../../version.js';

export async function checkHealth(deps: AppDeps) {
  const database = await deps.db.pool
    .query('SELECT 1')
    .then(() => 'up' as const)
    .catch(() => 'down' as const);
  return {
    status: database === 'up' ? ('ok' as const) : ('degraded' as const),
    database,
    version: VERSION,
    uptimeSeconds: Math.round((Date.now() - deps.startedAt.getTime()) / 1000),
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
    mailTransport: deps.mailer.kind,
    trackingModes: ['ENABLED' as const, 'DISABLED' as const, 'MARKETING_ONLY' as const],
  };
}
