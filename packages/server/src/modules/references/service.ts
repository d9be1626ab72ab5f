import { join, queryRows, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

/**
 * The reference index: "this segment / campaign / workflow step / template references that
 * field, event name, segment or template". Owners write their references when they are saved;
 * every `/usage` endpoint and every "409: still in use" check reads them here.
 */
export type OwnerType = 'segment' | 'template' | 'campaign' | 'workflow';
export type RefType = 'field' | 'event' | 'segment' | 'template' | 'topic';

export interface Ref {
  type: RefType;
  key: string;
}

export interface Owner {
  type: OwnerType;
  id: string;
}

/** Where each kind of owner keeps its name; new owner kinds (campaigns, workflows) add a line. */
const OWNER_NAMES: Record<OwnerType, Sql> = {
  segment: sql`(SELECT name FROM segments WHERE id = r.owner_id)`,
  template: sql`(SELECT name FROM templates WHERE id = r.owner_id)`,
  campaign: sql`(SELECT name FROM campaigns WHERE id = r.owner_id)`,
  workflow: sql`(SELECT name FROM workflows WHERE id = r.owner_id)`,
};

/** Owners that still act on what they reference (a SENT campaign no longer needs its segment). */
const OWNER_ACTIVE: Partial<Record<OwnerType, Sql>> = {
  campaign: sql`EXISTS (SELECT 1 FROM campaigns WHERE id = r.owner_id AND status IN ('DRAFT', 'SCHEDULED', 'SENDING'))`,
};

/**
 * Replaces an owner's references with `refs` (call in the transaction that saves the owner). Two
 * statements: in one, an INSERT … ON CONFLICT still sees the rows its sibling DELETE removes, so
 * re-saving an unchanged reference would lose it.
 */
export async function saveRefs(db: Queryable, projectId: string, owner: Owner, refs: Ref[]): Promise<void> {
  await dropRefs(db, owner);
  await queryRows(
    db,
    sql`INSERT INTO resource_refs (project_id, owner_type, owner_id, ref_type, ref_key)
        SELECT ${projectId}::uuid, ${owner.type}, ${owner.id}::uuid, t, k
        FROM unnest(${refs.map((r) => r.type)}::text[], ${refs.map((r) => r.key)}::text[]) AS x(t, k)
        ON CONFLICT DO NOTHING`,
  );
}

/** Gives a copy of an owner (a duplicated campaign) the references of the original. */
export async function copyRefs(db: Queryable, from: Owner, to: Owner): Promise<void> {
  await queryRows(
    db,
    sql`INSERT INTO resource_refs (project_id, owner_type, owner_id, ref_type, ref_key)
        SELECT project_id, ${to.type}, ${to.id}::uuid, ref_type, ref_key FROM resource_refs
        WHERE owner_type = ${from.type} AND owner_id = ${from.id}::uuid`,
  );
}

export const dropRefs = (db: Queryable, owner: Owner) =>
  queryRows(db, sql`DELETE FROM resource_refs WHERE owner_type = ${owner.type} AND owner_id = ${owner.id}::uuid`);

export interface Usage {
  ownerType: OwnerType;
  id: string;
  name: string;
}

/**
 * Owners that reference `key`. For fields, a reference to a nested path (`data.address.city`)
 * counts as a use of its top-level key (`data.address`) too.
 */
export async function findUsages(
  db: Queryable,
  projectId: string,
  ref: Ref,
  opts: { exceptOwner?: Owner; activeOnly?: boolean } = {},
): Promise<Usage[]> {
  const keyMatch =
    ref.type === 'field'
      ? sql`(r.ref_key = ${ref.key} OR r.ref_key LIKE ${`${ref.key}.%`})`
      : sql`r.ref_key = ${ref.key}`;
  const except = opts.exceptOwner
    ? sql` AND NOT (r.owner_type = ${opts.exceptOwner.type} AND r.owner_id = ${opts.exceptOwner.id}::uuid)`
    : sql``;
  const active = opts.activeOnly
    ? sql` AND CASE r.owner_type ${join(
        Object.entries(OWNER_ACTIVE).map(([type, check]) => sql`WHEN ${type} THEN ${check}`),
        ' ',
      )} ELSE true END`
    : sql``;
  const names = Object.entries(OWNER_NAMES).map(([type, name]) => sql`WHEN ${type} THEN ${name}`);
  const rows = await queryRows<{ owner_type: OwnerType; owner_id: string; name: string | null }>(
    db,
    sql`SELECT DISTINCT r.owner_type, r.owner_id, CASE r.owner_type ${join(names, ' ')} END AS name
        FROM resource_refs r
        WHERE r.project_id = ${projectId}::uuid AND r.ref_type = ${ref.type} AND ${keyMatch}${except}${active}
        ORDER BY 1, 3`,
  );
  return rows.map((r) => ({ ownerType: r.owner_type, id: r.owner_id, name: r.name ?? '' }));
}

/** Usages grouped the way the `/usage` endpoints answer. */
export function groupUsages(usages: Usage[]) {
  const of = (type: OwnerType) => usages.filter((u) => u.ownerType === type).map(({ id, name }) => ({ id, name }));
  return { segments: of('segment'), campaigns: of('campaign'), workflows: of('workflow'), templates: of('template') };
}
