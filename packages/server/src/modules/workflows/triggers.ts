import { queryRows, sql } from '../../db/query.js';
import type { ContactChange, FeedConsumer } from '../change-feed/feed.js';
import { resumeWaiting, startFromEvents, WORKFLOW_CHANNEL } from './executions.js';

/**
 * The change feed's workflow consumer: every recorded event (tracked, `contact.*`, `email.*`,
 * `segment.<slug>.entry/exit`) resumes executions waiting for it and starts executions of the
 * enabled workflows it triggers. It runs in the feed's transaction, so the executions commit with
 * the cursor: after a crash the batch is redone, never half-applied; a NOTIFY wakes the runners.
 */
export const workflowTriggersConsumer: FeedConsumer = {
  name: 'workflows.triggers',
  async handle(client, changes) {
    let due = 0;
    for (const [projectId, events] of eventsByProject(changes)) {
      const names = await interestingNames(client, projectId, [...new Set(events.map((e) => e.name))]);
      if (names.size === 0) continue;
      const ids = events.filter((e) => names.has(e.name)).map((e) => e.id);
      due += await resumeWaiting(client, projectId, ids);
      due += await startFromEvents(client, projectId, ids);
    }
    if (due > 0) await client.query('SELECT pg_notify($1, $2)', [WORKFLOW_CHANNEL, '']);
  },
};

function eventsByProject(changes: ContactChange[]) {
  const byProject = new Map<string, Array<{ id: string; name: string }>>();
  for (const change of changes) {
    if (change.kind !== 'event' || !change.eventId || !change.name) continue;
    const list = byProject.get(change.projectId) ?? [];
    list.push({ id: change.eventId, name: change.name });
    byProject.set(change.projectId, list);
  }
  return byProject;
}

/**
 * The names among `names` that some enabled workflow starts on or some execution waits for: the
 * common case (events nothing listens to) costs one indexed lookup per project and batch.
 */
async function interestingNames(client: Parameters<FeedConsumer['handle']>[0], projectId: string, names: string[]) {
  const rows = await queryRows<{ name: string }>(
    client,
    sql`SELECT trigger_event AS name FROM workflows
        WHERE project_id = ${projectId}::uuid AND enabled AND trigger_event = ANY(${names}::text[])
        UNION
        SELECT DISTINCT wait_event FROM workflow_executions
        WHERE project_id = ${projectId}::uuid AND status = 'WAITING' AND wait_event = ANY(${names}::text[])`,
  );
  return new Set(rows.map((r) => r.name));
}
