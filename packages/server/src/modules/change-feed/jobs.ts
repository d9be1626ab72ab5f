import { defineJob, noPayload } from '../../jobs/registry.js';
import { pruneChangeFeed } from './feed.js';

/** Drops change-feed rows every consumer has read. */
export const changeFeedPruneJob = defineJob({
  name: 'change-feed.prune',
  payload: noPayload,
  every: '5 minutes',
  async handler(_payload, { deps, logger }) {
    const pruned = await pruneChangeFeed(deps.db.pool);
    if (pruned) logger.debug({ pruned }, 'change feed pruned');
  },
});
