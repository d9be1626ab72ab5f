import { defineJob, noPayload } from '../../jobs/registry.js';
import { type DomainRow, recheck } from './service.js';
import { recheckPendingTrackingDomains } from './tracking-domains.js';

/** Re-checks the DNS of pending domains and pending tracking domains every 5 minutes (spec §3). */
export const recheckDomainsJob = defineJob({
  name: 'domains.recheck',
  payload: noPayload,
  every: '5 minutes',
  async handler(_payload, { deps, logger }) {
    const { rows } = await deps.db.pool.query<DomainRow>(
      'SELECT * FROM domains WHERE verified_at IS NULL ORDER BY last_checked_at NULLS FIRST LIMIT 500',
    );
    for (const domain of rows) {
      const checked = await recheck(deps, domain).catch((err) =>
        logger.warn({ err, domain: domain.domain }, 'domain check failed'),
      );
      if (checked?.verified_at) logger.info({ domain: domain.domain }, 'domain verified');
    }
    const tracking = await recheckPendingTrackingDomains(deps);
    if (tracking > 0) logger.info({ count: tracking }, 'tracking domains verified');
  },
});
