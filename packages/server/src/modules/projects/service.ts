import { RETENTION_DEFAULTS, type RelayRoutes, type Retention, type Role, type TrackingMode } from '@pigeon/contract';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { join, or, queryRows, raw, type Sql, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { ProjectAccess, ProjectRef } from '../../kit/caller.js';
import { forbidden, notFound, validationFailed } from '../../kit/errors.js';
import { requireVerifiedSender } from '../domains/public.js';
import { deleteProjectKeys } from '../idempotency/public.js';
import { generateKeyPair } from './keys.js';
import { PROJECT_COLUMNS, type Project, SECRET_KEY_ROLES, seesSecretKey } from './project.js';

export interface ProjectSettings {
  name?: string;
  trackingMode?: TrackingMode;
  subscribedRedirectUrl?: string | null;
  unsubscribedRedirectUrl?: string | null;
  unsubscribeMailbox?: string | null;
  campaignSendRate?: number | null;
  defaultFrom?: string | null;
  retention?: Partial<Retention>;
  relayRoutes?: Partial<RelayRoutes>;
}

export const toProjectDto = (project: Project, role: Role) => ({
  id: project.id,
  name: project.name,
  publicKey: project.publicKey,
  secretKey: seesSecretKey(role) ? project.secretKey : null,
  role,
  disabled: project.disabled,
  disabledReason: project.disabledReason ?? null,
  trackingMode: project.trackingMode,
  subscribedRedirectUrl: project.subscribedRedirectUrl ?? null,
  unsubscribedRedirectUrl: project.unsubscribedRedirectUrl ?? null,
  unsubscribeMailbox: project.unsubscribeMailbox ?? null,
  campaignSendRate: project.campaignSendRate ?? null,
  defaultFrom: project.defaultFrom ?? null,
  retention: {
    eventsDays: project.retentionEventsDays,
    contentDays: project.retentionContentDays,
    emailsDays: project.retentionEmailsDays,
  },
  relayRoutes: { transactional: project.relayRouteTransactional, campaign: project.relayRouteCampaign },
  createdAt: project.createdAt.toISOString(),
  updatedAt: project.updatedAt.toISOString(),
});

/** The project and its OWNER's membership in one statement. */
export async function createProject(db: Queryable, ownerId: string, name: string): Promise<Project> {
  const keys = generateKeyPair();
  const [project] = await queryRows<Project>(
    db,
    sql`WITH p AS (
          INSERT INTO projects (id, name, public_key, secret_key, public_key_hash, secret_key_hash,
                                retention_events_days, retention_content_days, retention_emails_days)
          VALUES (${uuidv7()}::uuid, ${name}, ${keys.publicKey}, ${keys.secretKey}, ${keys.publicKeyHash}::bytea,
                  ${keys.secretKeyHash}::bytea, ${RETENTION_DEFAULTS.eventsDays}::int,
                  ${RETENTION_DEFAULTS.contentDays}::int, ${RETENTION_DEFAULTS.emailsDays}::int)
          RETURNING *
        ), owner AS (
          INSERT INTO memberships (project_id, user_id, role, saw_secret_key)
          SELECT id, ${ownerId}::uuid, 'OWNER', true FROM p
        )
        SELECT ${PROJECT_COLUMNS} FROM p`,
  );
  return project as Project;
}

export async function listProjects(db: Queryable, userId: string) {
  const rows = await queryRows<Project & { memberRole: Role }>(
    db,
    sql`SELECT ${PROJECT_COLUMNS}, m.role AS "memberRole"
        FROM memberships m JOIN projects p ON p.id = m.project_id
        WHERE m.user_id = ${userId}::uuid
        ORDER BY m.created_at, m.project_id`,
  );
  return rows.map(({ memberRole, ...project }) => toProjectDto(project, memberRole));
}

/** A state rule of the project (its role rules are the route's permission, checked by `authenticate`). */
export function refuseIfDisabled(project: Pick<ProjectRef, 'disabled' | 'disabledReason'>): void {
  if (project.disabled) {
    throw forbidden('This project is disabled; it can read but not write', 'PROJECT_DISABLED', {
      details: { reason: project.disabledReason },
    });
  }
}

const SETTING_COLUMNS = {
  name: 'name',
  trackingMode: 'tracking_mode',
  subscribedRedirectUrl: 'subscribed_redirect_url',
  unsubscribedRedirectUrl: 'unsubscribed_redirect_url',
  unsubscribeMailbox: 'unsubscribe_mailbox',
  campaignSendRate: 'campaign_send_rate',
  defaultFrom: 'default_from',
} as const satisfies Record<Exclude<keyof ProjectSettings, 'retention' | 'relayRoutes'>, string>;

const RELAY_ROUTE_COLUMNS = {
  transactional: 'relay_route_transactional',
  campaign: 'relay_route_campaign',
} as const satisfies Record<keyof RelayRoutes, string>;

const RETENTION_COLUMNS = {
  eventsDays: 'retention_events_days',
  contentDays: 'retention_content_days',
  emailsDays: 'retention_emails_days',
} as const satisfies Record<keyof Retention, string>;

/** Each setting given, as its column and its new value (undefined: unchanged; null: cleared). */
function settingValues(changes: ProjectSettings): Array<{ column: Sql; value: Sql }> {
  const { retention, relayRoutes, ...settings } = changes;
  const out: Array<{ column: Sql; value: Sql }> = [];
  const add = (column: string, value: unknown, type: string) =>
    out.push({ column: raw(column), value: sql`${value}::${raw(type)}` });
  for (const [key, column] of Object.entries(SETTING_COLUMNS)) {
    const value = settings[key as keyof typeof SETTING_COLUMNS];
    if (value !== undefined) add(column, value, key === 'campaignSendRate' ? 'real' : 'text');
  }
  for (const [key, column] of Object.entries(RETENTION_COLUMNS)) {
    const value = retention?.[key as keyof Retention];
    if (value !== undefined) add(column, value, 'int');
  }
  for (const [key, column] of Object.entries(RELAY_ROUTE_COLUMNS)) {
    const value = relayRoutes?.[key as keyof RelayRoutes];
    if (value !== undefined) add(column, value && [...new Set(value)], 'text[]');
  }
  return out;
}

/**
 * `SET` for the given columns, with `updated_at` moved only when a value really changes (a PATCH
 * that repeats the current settings leaves it, as it did with the ORM).
 */
function assignments(values: Array<{ column: Sql; value: Sql }>): Sql {
  const sets = values.map(({ column, value }) => sql`${column} = ${value}`);
  const changed = or(values.map(({ column, value }) => sql`${column} IS DISTINCT FROM ${value}`));
  return join([...sets, sql`updated_at = CASE WHEN ${changed} THEN now() ELSE updated_at END`], ', ');
}

export async function updateProject(
  deps: Pick<AppDeps, 'db' | 'config'>,
  access: ProjectAccess,
  changes: ProjectSettings,
) {
  const projectId = access.project.id;
  refuseIfDisabled(access.project);
  // The same 403 as a template's sender: a default sender must be on a domain verified for the project.
  if (changes.defaultFrom) await requireVerifiedSender(deps.db.pool, projectId, changes.defaultFrom);
  if (changes.relayRoutes) refuseUnknownRelays(deps.config, changes.relayRoutes);
  const [updated] = await queryRows<Project>(
    deps.db.pool,
    sql`UPDATE projects p SET ${assignments(settingValues(changes))}
        WHERE p.id = ${projectId}::uuid RETURNING ${PROJECT_COLUMNS}`,
  );
  if (!updated) throw notFound('Project');
  return toProjectDto(updated, access.role);
}

/** A route names only relays of this installation (GET /config `relays`). */
function refuseUnknownRelays(config: AppDeps['config'], routes: Partial<RelayRoutes>): void {
  const known = config.mail.relays.map((r) => r.name);
  for (const [stream, route] of Object.entries(routes)) {
    const unknown = route?.filter((name) => !known.includes(name)) ?? [];
    if (unknown.length) {
      throw validationFailed([
        {
          field: `relayRoutes.${stream}`,
          message: `no relay named ${unknown.join(', ')} (the relays are ${known.join(', ')})`,
          code: 'unknown_relay',
        },
      ]);
    }
  }
}

export async function deleteProject(pool: pg.Pool, projectId: string): Promise<void> {
  await inTransaction(pool, async (tx) => {
    await queryRows(tx, sql`DELETE FROM projects WHERE id = ${projectId}::uuid`);
    await deleteProjectKeys(tx, projectId);
  });
}

/**
 * Both keys change in one UPDATE: every process looks keys up per request, so the old ones die at
 * once. Members who are not OWNER or ADMIN have not seen the new secret key.
 */
export async function regenerateKeys(pool: pg.Pool, access: ProjectAccess) {
  const projectId = access.project.id;
  refuseIfDisabled(access.project);
  return inTransaction(pool, async (tx) => {
    const keys = generateKeyPair();
    const [updated] = await queryRows<Project>(
      tx,
      sql`UPDATE projects p SET public_key = ${keys.publicKey}, secret_key = ${keys.secretKey},
            public_key_hash = ${keys.publicKeyHash}::bytea, secret_key_hash = ${keys.secretKeyHash}::bytea, updated_at = now()
          WHERE p.id = ${projectId}::uuid RETURNING ${PROJECT_COLUMNS}`,
    );
    await queryRows(
      tx,
      sql`UPDATE memberships SET saw_secret_key = false
          WHERE project_id = ${projectId}::uuid AND NOT (role = ANY(${[...SECRET_KEY_ROLES]}::text[]))`,
    );
    return toProjectDto(updated as Project, access.role);
  });
}

/** Disabling is an operator action (`pigeon project disable`), recorded as a suspension (one statement: the flag and its row). */
export async function setProjectDisabled(db: Queryable, projectId: string, reason: string | null): Promise<Project> {
  const [project] = await queryRows<Project>(
    db,
    sql`WITH p AS (
          UPDATE projects SET ${assignments([
            { column: raw('disabled'), value: sql`${reason !== null}::boolean` },
            { column: raw('disabled_reason'), value: sql`${reason}::text` },
          ])}
          WHERE id = ${projectId}::uuid RETURNING *
        ), suspension AS (
          INSERT INTO project_suspensions (id, project_id, reason)
          SELECT ${uuidv7()}::uuid, id, ${reason}::text FROM p WHERE ${reason}::text IS NOT NULL
        )
        SELECT ${PROJECT_COLUMNS} FROM p`,
  );
  if (!project) throw notFound('Project');
  return project;
}
