import { type MailTransportKind, RelayStream } from '@pigeon/contract';
import type { Config, RelayRoutes } from '../config/index.js';
import { queryRows, sql } from '../db/query.js';
import type { Queryable } from '../db/sql.js';
import type { MailTransport } from './mail-transport.js';
import { createMailTransport } from './transport.js';

/** A relay of the installation with its transport (one pool of connections per SMTP relay). */
export interface Relay {
  name: string;
  kind: MailTransportKind;
  /** An SMTP relay's URL as configured (with its credentials: never shown as it is). */
  url?: string;
  transport: MailTransport;
}

export interface Relays {
  /** In `RELAYS` order. */
  list: Relay[];
  /** The installation's route per stream. */
  routes: RelayRoutes;
  /** The first relay of the transactional route: Pigeon's own mail (sign-up, notices) goes through it. */
  system: Relay;
  close(): void;
}

/** Every configured relay's transport, built once per process. */
export function createRelays(mail: Config['mail']): Relays {
  const list = mail.relays.map((r) => ({
    ...r,
    transport: createMailTransport({
      smtpUrl: r.kind === 'smtp' ? r.url : undefined,
      ses: r.kind === 'ses' ? mail.ses : undefined,
      outboxDir: mail.outboxDir,
    }),
  }));
  const system = list.find((r) => r.name === mail.routes.transactional[0]) ?? (list[0] as Relay);
  return {
    list,
    routes: mail.routes,
    system,
    close: () => {
      for (const r of list) r.transport.close();
    },
  };
}

/**
 * Which route an email takes: campaigns (and their test sends) and workflows are the campaign
 * stream, so bulk mail can keep to relays (and their reputation) of its own; `/v1/send`, batches,
 * SMTP submission and the compatibility layers are the transactional stream.
 */
export function streamOf(source: string): RelayStream {
  return source === 'CAMPAIGN' || source === 'CAMPAIGN_TEST' || source === 'WORKFLOW' ? 'campaign' : 'transactional';
}

/**
 * The relay names a message of `stream` tries, in order: the project's own route when it has one
 * (names no longer configured are left out), else the installation's.
 */
export function routeNames(routes: RelayRoutes, known: string[], stream: RelayStream, own: string[] | null): string[] {
  const usable = own?.filter((n) => known.includes(n));
  return usable?.length ? usable : routes[stream];
}

/** A project's own routes (`projects.relay_route_*`; null: the installation's). */
export type ProjectRoutes = Record<RelayStream, string[] | null>;

/** The own routes of the given projects, for the delivery loops' cache. */
export async function readProjectRoutes(db: Queryable, projectIds: string[]): Promise<Map<string, ProjectRoutes>> {
  const rows = await queryRows<{ id: string; transactional: string[] | null; campaign: string[] | null }>(
    db,
    sql`SELECT id, relay_route_transactional AS transactional, relay_route_campaign AS campaign
        FROM projects WHERE id = ANY(${projectIds}::uuid[])`,
  );
  return new Map(rows.map((r) => [r.id, { transactional: r.transactional, campaign: r.campaign }]));
}

/** An SMTP URL without its password (user names and the rest stay). */
export function shownUrl(url: string | undefined): string | null {
  if (!url) return null;
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

/** A relay a project's mail can use, as the sender check and the docs show it. */
export interface ProjectRelay {
  name: string;
  kind: MailTransportKind;
  /** The SMTP relay's URL without its password (`smtps://` is TLS from the start); null for SES and the outbox. */
  url: string | null;
  /** The streams whose route (the project's own, else the installation's) names it. */
  streams: RelayStream[];
}

/** The relays a project's mail can go through, in `RELAYS` order, with the streams that use each. */
export async function relaysOfProject(
  deps: { db: { pool: Queryable }; config: Pick<Config, 'mail'> },
  projectId: string,
): Promise<ProjectRelay[]> {
  const { relays, routes } = deps.config.mail;
  const own = (await readProjectRoutes(deps.db.pool, [projectId])).get(projectId);
  const known = relays.map((r) => r.name);
  return relays
    .map((r) => ({
      name: r.name,
      kind: r.kind,
      url: shownUrl(r.url),
      streams: RelayStream.options.filter((s) => routeNames(routes, known, s, own?.[s] ?? null).includes(r.name)),
    }))
    .filter((r) => r.streams.length > 0);
}
