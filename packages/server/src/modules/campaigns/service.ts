import type {
  Campaign,
  CampaignInput,
  CampaignListQuery,
  CampaignStatus,
  ConditionTree,
  ContentType,
} from '@pigeon/contract';
import { CampaignStatus as CampaignStatuses } from '@pigeon/contract';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { join, queryRows, raw, runStatement, type Sql, sql } from '../../db/query.js';
import { findInProject } from '../../db/scoped.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import { escapeLike } from '../../kit/cursor.js';
import { badRequest, conflict } from '../../kit/errors.js';
import { requireVerifiedSender } from '../domains/public.js';
import { copyRefs, dropRefs, type Ref, saveRefs } from '../references/public.js';
import { requireTopic } from '../topics/public.js';
import { type Audience, checkAudience } from './audience.js';
import { type Counters, campaignCounters, campaignStats, NO_COUNTS } from './stats.js';

export interface CampaignRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  subject: string;
  body: string;
  from_email: string;
  from_name: string | null;
  reply_to: string | null;
  type: ContentType;
  template_id: string | null;
  status: CampaignStatus;
  audience_type: Audience['type'];
  segment_id: string | null;
  audience_condition: ConditionTree | null;
  topic_id: string | null;
  scheduled_for: Date | null;
  total_recipients: number;
  started_at: Date | null;
  sent_at: Date | null;
  cancelled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

type Input = z.output<typeof CampaignInput>;

export const toCampaignDto = (row: CampaignRow, counts: Counters = NO_COUNTS): Campaign => ({
  id: row.id,
  name: row.name,
  description: row.description,
  subject: row.subject,
  body: row.body,
  from: row.from_email,
  fromName: row.from_name,
  replyTo: row.reply_to,
  type: row.type,
  templateId: row.template_id,
  status: row.status,
  audienceType: row.audience_type,
  segmentId: row.segment_id,
  audienceCondition: row.audience_condition,
  topicId: row.topic_id,
  scheduledFor: row.scheduled_for?.toISOString() ?? null,
  totalRecipients: row.total_recipients,
  sentCount: counts.sent,
  deliveredCount: counts.delivered,
  openedCount: counts.opened,
  clickedCount: counts.clicked,
  bouncedCount: counts.bounced,
  complainedCount: counts.complained,
  unsubscribedCount: counts.unsubscribed,
  projectId: row.project_id,
  sentAt: row.sent_at?.toISOString() ?? null,
  cancelledAt: row.cancelled_at?.toISOString() ?? null,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export const findCampaign = (db: Queryable, projectId: string, id: string) =>
  findInProject<CampaignRow>(db, 'campaigns', projectId, id, 'Campaign');

async function withCounters(db: Queryable, rows: CampaignRow[]): Promise<Campaign[]> {
  const counts = await campaignCounters(db, rows);
  return rows.map((row) => toCampaignDto(row, counts.get(row.id)));
}

export const campaignDto = async (db: Queryable, row: CampaignRow) => (await withCounters(db, [row]))[0] as Campaign;

/** GET /campaigns/:id. */
export async function getCampaign(db: Queryable, projectId: string, id: string) {
  return campaignDto(db, await findCampaign(db, projectId, id));
}

/** GET /campaigns/:id/stats. */
export async function getCampaignStats(db: Queryable, projectId: string, id: string) {
  return campaignStats(db, await findCampaign(db, projectId, id));
}

/** Everything a saved campaign must satisfy: a verified sender, an audience that exists, a template of the project. */
async function checkInput(db: Queryable, projectId: string, input: Input) {
  await requireVerifiedSender(db, projectId, input.from);
  if (input.templateId) {
    await findInProject(db, 'templates', projectId, input.templateId, 'Template').catch(() => {
      throw badRequest(`templateId: no template ${input.templateId} in this project`);
    });
  }
  if (input.topicId) await requireTopic(db, projectId, input.topicId, 'topicId');
  const { audience, refs } = await checkAudience(db, projectId, input);
  const allRefs: Ref[] = input.templateId ? [...refs, { type: 'template', key: input.templateId }] : refs;
  if (input.topicId) allRefs.push({ type: 'topic', key: input.topicId });
  return { audience, refs: allRefs };
}

/** The saved columns of a campaign, for INSERT and UPDATE alike. */
const fields = (input: Input, audience: Audience): Array<[string, Sql]> => [
  ['name', sql`${input.name}`],
  ['description', sql`${input.description ?? null}`],
  ['subject', sql`${input.subject}`],
  ['body', sql`${input.body}`],
  ['from_email', sql`${input.from}`],
  ['from_name', sql`${input.fromName ?? null}`],
  ['reply_to', sql`${input.replyTo ?? null}`],
  ['type', sql`${input.type}`],
  ['template_id', sql`${input.templateId ?? null}::uuid`],
  ['audience_type', sql`${audience.type}`],
  ['segment_id', sql`${audience.segmentId}::uuid`],
  ['audience_condition', sql`${audience.condition ? JSON.stringify(audience.condition) : null}::jsonb`],
  ['topic_id', sql`${input.topicId ?? null}::uuid`],
];

export async function createCampaign(pool: pg.Pool, projectId: string, input: Input) {
  const { audience, refs } = await checkInput(pool, projectId, input);
  const id = uuidv7();
  const cols = fields(input, audience);
  const row = await inTransaction(pool, async (client) => {
    const [created] = await queryRows<CampaignRow>(
      client,
      sql`INSERT INTO campaigns (id, project_id, ${raw(cols.map(([c]) => c).join(', '))})
          VALUES (${id}::uuid, ${projectId}::uuid, ${join(
            cols.map(([, v]) => v),
            ', ',
          )}) RETURNING *`,
    );
    await saveRefs(client, projectId, { type: 'campaign', id }, refs);
    return created as CampaignRow;
  });
  return toCampaignDto(row);
}

export async function replaceCampaign(pool: pg.Pool, projectId: string, id: string, input: Input) {
  const before = await findCampaign(pool, projectId, id);
  if (before.status !== 'DRAFT' && before.status !== 'SCHEDULED') {
    throw conflict(`A ${before.status} campaign cannot be changed; duplicate it to send a new version`);
  }
  const { audience, refs } = await checkInput(pool, projectId, input);
  const row = await inTransaction(pool, async (client) => {
    const [updated] = await queryRows<CampaignRow>(
      client,
      sql`UPDATE campaigns SET ${join(
        fields(input, audience).map(([c, v]) => sql`${raw(c)} = ${v}`),
        ', ',
      )}, updated_at = now()
          WHERE id = ${id}::uuid AND status IN ('DRAFT', 'SCHEDULED') RETURNING *`,
    );
    if (!updated) throw conflict('The campaign started sending meanwhile; it can no longer be changed');
    await saveRefs(client, projectId, { type: 'campaign', id }, refs);
    return updated;
  });
  return campaignDto(pool, row);
}

export async function deleteCampaign(pool: pg.Pool, projectId: string, id: string): Promise<void> {
  await findCampaign(pool, projectId, id);
  await inTransaction(pool, async (client) => {
    const deleted = await runStatement(
      client,
      sql`DELETE FROM campaigns WHERE project_id = ${projectId}::uuid AND id = ${id}::uuid AND status <> 'SENDING'`,
    );
    if (deleted === 0) throw conflict('The campaign is sending; cancel it first');
    await dropRefs(client, { type: 'campaign', id });
  });
}

export async function duplicateCampaign(pool: pg.Pool, projectId: string, id: string) {
  const source = await findCampaign(pool, projectId, id);
  const copy = uuidv7();
  const row = await inTransaction(pool, async (client) => {
    const [created] = await queryRows<CampaignRow>(
      client,
      sql`INSERT INTO campaigns (id, project_id, name, description, subject, body, from_email, from_name, reply_to,
            type, template_id, audience_type, segment_id, audience_condition, topic_id)
          SELECT ${copy}::uuid, project_id, left(name || ' (copy)', 200), description, subject, body, from_email, from_name,
            reply_to, type, template_id, audience_type, segment_id, audience_condition, topic_id
          FROM campaigns WHERE id = ${source.id}::uuid RETURNING *`,
    );
    await copyRefs(client, { type: 'campaign', id: source.id }, { type: 'campaign', id: copy });
    return created as CampaignRow;
  });
  return toCampaignDto(row);
}

const SORT = { name: 'name', createdAt: 'created_at', updatedAt: 'updated_at' } as const;

export async function listCampaigns(db: Queryable, projectId: string, q: z.output<typeof CampaignListQuery>) {
  if (q.status !== undefined && !CampaignStatuses.safeParse(q.status).success) {
    throw badRequest(`status must be one of ${CampaignStatuses.options.join(', ')}`);
  }
  // q.sort is one of SORT's own keys: the contract maps anything else to createdAt.
  const sort = SORT[q.sort];
  const dir = q.dir === 'asc' ? 'ASC' : 'DESC';
  const pattern = q.search ? `%${escapeLike(q.search)}%` : null;
  const where = sql`project_id = ${projectId}::uuid
    AND (${q.status ?? null}::text IS NULL OR status = ${q.status ?? null})
    AND (${pattern}::text IS NULL OR name ILIKE ${pattern} OR subject ILIKE ${pattern} OR from_email ILIKE ${pattern})`;
  const [total] = await queryRows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM campaigns WHERE ${where}`);
  const rows = await queryRows<CampaignRow>(
    db,
    sql`SELECT * FROM campaigns WHERE ${where}
        ORDER BY ${raw(`${sort} ${dir}, id ${dir}`)} LIMIT ${q.pageSize} OFFSET ${(q.page - 1) * q.pageSize}`,
  );
  const n = total?.n ?? 0;
  return {
    data: await withCounters(db, rows),
    page: q.page,
    pageSize: q.pageSize,
    total: n,
    totalPages: Math.ceil(n / q.pageSize),
  };
}

/** Scheduled campaigns, soonest first (GET /activity/upcoming). */
export async function upcomingCampaigns(db: Queryable, projectId: string, limit: number) {
  const rows = await queryRows<CampaignRow>(
    db,
    sql`SELECT * FROM campaigns WHERE project_id = ${projectId}::uuid AND status = 'SCHEDULED'
        ORDER BY scheduled_for, id LIMIT ${limit}`,
  );
  return rows.map((r) => ({
    type: 'campaign' as const,
    id: r.id,
    name: r.name,
    scheduledFor: (r.scheduled_for as Date).toISOString(),
    audienceType: r.audience_type,
  }));
}
