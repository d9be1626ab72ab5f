import type { ContentType, TemplateListQuery } from '@pigeon/contract';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { and, join, queryRows, raw, sql } from '../../db/query.js';
import { findInProject } from '../../db/scoped.js';
import type { Queryable } from '../../db/sql.js';
import { escapeLike } from '../../kit/cursor.js';
import { conflict } from '../../kit/errors.js';
import { requireVerifiedSender } from '../domains/public.js';
import { dropRefs, findUsages, groupUsages, saveRefs } from '../references/public.js';
import { dataFieldsUsed } from '../rendering/public.js';

export interface TemplateRow {
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
  created_at: Date;
  updated_at: Date;
}

export interface TemplateInput {
  name: string;
  description?: string | null;
  subject: string;
  body: string;
  from: string;
  fromName?: string | null;
  replyTo?: string | null;
  type: ContentType;
}

export const toTemplateDto = (t: TemplateRow) => ({
  id: t.id,
  name: t.name,
  description: t.description,
  subject: t.subject,
  body: t.body,
  from: t.from_email,
  fromName: t.from_name,
  replyTo: t.reply_to,
  type: t.type,
  projectId: t.project_id,
  createdAt: t.created_at.toISOString(),
  updatedAt: t.updated_at.toISOString(),
});

/** Records the data fields the template reads in the reference index, then maps it. */
async function saved(db: Queryable, row: TemplateRow) {
  const fields = dataFieldsUsed(row.subject, row.body).map((key) => ({ type: 'field' as const, key }));
  await saveRefs(db, row.project_id, { type: 'template', id: row.id }, fields);
  return toTemplateDto(row);
}

export async function createTemplate(db: Queryable, projectId: string, input: TemplateInput) {
  await requireVerifiedSender(db, projectId, input.from);
  const rows = await queryRows<TemplateRow>(
    db,
    sql`INSERT INTO templates (id, project_id, name, description, subject, body, from_email, from_name, reply_to, type)
     VALUES (${uuidv7()}, ${projectId}, ${input.name}, ${input.description ?? null}, ${input.subject}, ${input.body}, ${input.from}, ${input.fromName ?? null}, ${input.replyTo ?? null}, ${input.type}) RETURNING *`,
  );
  return saved(db, rows[0] as TemplateRow);
}

export const findTemplate = (db: Queryable, projectId: string, id: string) =>
  findInProject<TemplateRow>(db, 'templates', projectId, id, 'Template');

const COLUMNS: Record<keyof TemplateInput, string> = {
  name: 'name',
  description: 'description',
  subject: 'subject',
  body: 'body',
  from: 'from_email',
  fromName: 'from_name',
  replyTo: 'reply_to',
  type: 'type',
};

export async function updateTemplate(db: Queryable, projectId: string, id: string, patch: Partial<TemplateInput>) {
  await findTemplate(db, projectId, id);
  if (patch.from) await requireVerifiedSender(db, projectId, patch.from);
  const entries = Object.entries(patch).filter(([, v]) => v !== undefined) as Array<[keyof TemplateInput, unknown]>;
  const sets = entries.map(([key, value]) => sql`${raw(COLUMNS[key])} = ${value}`);
  const rows = await queryRows<TemplateRow>(
    db,
    sql`UPDATE templates SET ${join([...sets, raw('updated_at = now()')], ', ')}
        WHERE project_id = ${projectId} AND id = ${id} RETURNING *`,
  );
  return saved(db, rows[0] as TemplateRow);
}

/** Campaigns made from the template and workflow steps that send it, from the reference index. */
export async function templateUsage(db: Queryable, projectId: string, id: string) {
  await findTemplate(db, projectId, id);
  const { campaigns, workflows } = groupUsages(await findUsages(db, projectId, { type: 'template', key: id }));
  const workflowSteps = await queryRows<{ id: string; workflowId: string; name: string }>(
    db,
    sql`SELECT id, workflow_id AS "workflowId", name FROM workflow_steps
     WHERE workflow_id = ANY(${workflows.map((w) => w.id)}::uuid[]) AND template_id = ${id} ORDER BY created_at`,
  );
  return { campaigns, workflowSteps };
}

/** A template a workflow step sends cannot go (409); campaigns keep their own copy of the content. */
export async function deleteTemplate(db: Queryable, projectId: string, id: string): Promise<void> {
  const { workflowSteps } = await templateUsage(db, projectId, id);
  if (workflowSteps.length > 0) {
    throw conflict(`The template is sent by ${workflowSteps.length} workflow step(s); change or delete them first`, {
      details: { workflowSteps },
    });
  }
  await queryRows(db, sql`DELETE FROM templates WHERE project_id = ${projectId} AND id = ${id}`);
  await dropRefs(db, { type: 'template', id });
}

export async function duplicateTemplate(db: Queryable, projectId: string, id: string) {
  const source = await findTemplate(db, projectId, id);
  const rows = await queryRows<TemplateRow>(
    db,
    sql`INSERT INTO templates (id, project_id, name, description, subject, body, from_email, from_name, reply_to, type)
     SELECT ${uuidv7()}, project_id, name || ' (copy)', description, subject, body, from_email, from_name, reply_to, type
     FROM templates WHERE project_id = ${projectId} AND id = ${source.id} RETURNING *`,
  );
  return saved(db, rows[0] as TemplateRow);
}

const SORT = { name: 'name', createdAt: 'created_at', updatedAt: 'updated_at' } as const;

export async function listTemplates(db: Queryable, projectId: string, q: z.output<typeof TemplateListQuery>) {
  const where = [sql`project_id = ${projectId}`];
  if (q.type) where.push(sql`type = ${q.type}`);
  if (q.search) {
    const pattern = `%${escapeLike(q.search.trim())}%`;
    where.push(sql`(name ILIKE ${pattern} OR description ILIKE ${pattern} OR subject ILIKE ${pattern})`);
  }
  const [counted] = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM templates WHERE ${and(where)}`,
  );
  const total = counted?.n ?? 0;
  const dir = raw(q.dir === 'asc' ? 'ASC' : 'DESC');
  const rows = await queryRows<TemplateRow>(
    db,
    sql`SELECT * FROM templates WHERE ${and(where)} ORDER BY ${raw(SORT[q.sort])} ${dir}, id ${dir}
        LIMIT ${q.pageSize} OFFSET ${(q.page - 1) * q.pageSize}`,
  );
  return {
    data: rows.map(toTemplateDto),
    page: q.page,
    pageSize: q.pageSize,
    total,
    totalPages: Math.ceil(total / q.pageSize),
  };
}
