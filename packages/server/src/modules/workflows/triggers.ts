import { queryRows, sql } from '../../db/query.js';
import type { ContactChange, FeedConsumer } from '../change-feed/public.js';
import { resumeWaiting, startFromEvents, WORKFLOW_CHANNEL } from './executions.js';

/**
 * The change feed's workflow consumer: every recorded event (tracked, `contact.*`, `email.*`,
 * `segment.<slug>.entry/exit`) resumes executions waiting for it and starts executions of the
 * enabled workflows it triggers. It runs in the feed's transaction, so the executions commit with
 * the cursor: after a crash the batch is redone, never half-applied; a NOTIFY wakes the runners.
 */
export const workflowTriggersConsumer: FeedConsumer = {
  name: 'workflows.triggers',
  // Only the events some enabled workflow starts on or some execution waits for reach the
  // process: the common case (events nothing listens to) is two index probes in the database.
  wants: sql`ch.kind = 'event' AND (
    EXISTS (SELECT 1 FROM workflows w WHERE w.project_id = ch.project_id AND w.enabled AND w.trigger_event = ch.name)
    OR EXISTS (SELECT 1 FROM workflow_executions x
               WHERE x.project_id = ch.project_id AND x.status = 'WAITING' AND x.wait_event = ch.name))`,
  async handle(client, changes) {
    let due = 0;
    for (const [projectId, ids] of eventsByProject(changes)) {
      due += await resumeWaiting(client, projectId, ids);
      due += await startFromEvents(client, projectId, ids);
    }
    if (due > 0) await queryRows(client, sql`SELECT pg_notify(${WORKFLOW_CHANNEL}, ${''})`);
  },
};

function eventsByProject(changes: ContactChange[]) {
  const byProject = new Map<string, string[]>();
  for (const change of changes) {
    if (!change.eventId) continue;
    const list = byProject.get(change.projectId) ?? [];
    list.push(change.eventId);
    byProject.set(change.projectId, list);
  }
  return byProject;
}
