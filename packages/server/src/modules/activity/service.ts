import type { ActivityType } from '@pigeon/contract';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { upcomingCampaigns } from '../campaigns/public.js';
import { countEvents, type EventFilter, eventStats, isReservedEventName, listEvents } from '../events/public.js';
import { upcomingSteps } from '../workflows/public.js';

/** Every activity type, in the order a filter menu shows them. */
export const ACTIVITY_TYPES: Array<{ type: ActivityType; description: string }> = [
  { type: 'email.sent', description: 'An email was accepted by the receiving mail server (or written to the outbox)' },
  { type: 'email.delivery', description: "The receiving provider reported the email in the recipient's mailbox" },
  { type: 'email.open', description: 'The open pixel of a tracked email was loaded (bursts folded, see docs)' },
  { type: 'email.click', description: 'A link in a tracked email was followed (bursts folded, see docs)' },
  { type: 'email.bounce', description: 'The receiving server refused the email permanently' },
  { type: 'email.complaint', description: 'The recipient marked the email as spam' },
  { type: 'contact.subscribed', description: 'A contact became subscribed' },
  { type: 'contact.unsubscribed', description: 'A contact became unsubscribed' },
  { type: 'contact.topic.subscribed', description: 'A contact became subscribed to a topic' },
  { type: 'contact.topic.unsubscribed', description: 'A contact left a topic' },
  { type: 'event', description: 'A custom event your code tracked' },
];
const EMITTED = new Set<string>(ACTIVITY_TYPES.map((t) => t.type).filter((t) => t !== 'event'));

const namesFor = (types: ActivityType[] | undefined): EventFilter['names'] =>
  types?.length ? { exact: types.filter((t) => t !== 'event'), custom: types.includes('event') } : undefined;

const text = (value: unknown) => (typeof value === 'string' ? value : null);

export async function listActivity(
  db: Queryable,
  projectId: string,
  q: {
    limit: number;
    cursor?: string;
    from?: string;
    to?: string;
    contactId?: string;
    types?: ActivityType[];
    tag?: Record<string, string>;
  },
) {
  const page = await listEvents(db, projectId, { ...q, names: namesFor(q.types), emailTags: q.tag });
  return {
    ...page,
    data: page.data.map((e) => ({
      ...e,
      type: (EMITTED.has(e.name) ? e.name : 'event') as ActivityType,
      emailId: text(e.data.emailId),
      subject: text(e.data.subject),
      link: text(e.data.link),
    })),
  };
}

/** Event counts by name folded into activity types, every type listed (zero if none). */
function countsByType(byName: Array<{ name: string; count: number }>) {
  const counts = new Map<string, number>();
  for (const { name, count } of byName) {
    const type = EMITTED.has(name) ? name : isReservedEventName(name) ? undefined : 'event';
    if (type) counts.set(type, (counts.get(type) ?? 0) + count);
  }
  return ACTIVITY_TYPES.map((t) => ({ ...t, count: counts.get(t.type) ?? 0 }));
}

/** Counts per type over a range (default: the last 30 days), zero for types that did not happen. */
export async function activityTypes(
  db: Queryable,
  projectId: string,
  range: { from?: string; to?: string },
  now: Date,
) {
  return countsByType((await eventStats(db, projectId, range, now)).byName);
}

/** Totals per type and per day over a range (default: the last 30 days). */
export async function activityStats(
  db: Queryable,
  projectId: string,
  range: { from?: string; to?: string },
  now: Date,
) {
  const stats = await eventStats(db, projectId, range, now);
  const byType = countsByType(stats.byName).map(({ type, count }) => ({ type, count }));
  return { from: stats.from, to: stats.to, total: stats.total, byType, byDay: stats.byDay };
}

export async function recentActivityCount(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  projectId: string,
  q: { minutes: number; types?: ActivityType[] },
) {
  const since = new Date(deps.clock.nowMs() - q.minutes * 60_000).toISOString();
  return { count: await countEvents(deps.db.pool, projectId, { from: since, names: namesFor(q.types) }), since };
}

/** What Pigeon will do on its own, soonest first: scheduled campaigns and waiting workflow steps. */
export async function upcomingActivity(db: Queryable, projectId: string, limit: number) {
  const [campaigns, steps] = await Promise.all([
    upcomingCampaigns(db, projectId, limit),
    upcomingSteps(db, projectId, limit),
  ]);
  return [...campaigns, ...steps].sort((a, b) => a.scheduledFor.localeCompare(b.scheduledFor)).slice(0, limit);
}
