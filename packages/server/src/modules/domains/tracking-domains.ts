import type { DnsRecordStatus, TrackingDomain } from '@pigeon/contract';
import type { DatabaseError } from 'pg';
import { uuidv7 } from 'uuidv7';
import type { z } from 'zod';
import { queryRows, runStatement, sql } from '../../db/query.js';
import { isUuid } from '../../db/scoped.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { conflict, notFound, validationFailed } from '../../kit/errors.js';
import { trackingBaseUrl } from '../../kit/public-url.js';
import { createResolver } from './dns-check.js';

interface TrackingDomainRow {
  id: string;
  project_id: string;
  domain_id: string;
  domain: string;
  verified_at: Date | null;
  last_checked_at: Date | null;
  record_status: DnsRecordStatus;
  note: string | null;
  created_at: Date;
  sender_domain: string;
}

/** The host a tracking domain's CNAME must name: the host of `PUBLIC_URL`. */
const publicHost = (deps: Pick<AppDeps, 'config'>) => new URL(deps.config.http.publicUrl).hostname;

const toDto = (deps: Pick<AppDeps, 'config'>, row: TrackingDomainRow): z.infer<typeof TrackingDomain> => ({
  id: row.id,
  domain: row.domain,
  senderDomain: { id: row.domain_id, domain: row.sender_domain },
  status: row.verified_at ? 'verified' : 'pending',
  verifiedAt: row.verified_at?.toISOString() ?? null,
  lastCheckedAt: row.last_checked_at?.toISOString() ?? null,
  record: { type: 'CNAME', name: row.domain, value: publicHost(deps), status: row.record_status },
  url: trackingBaseUrl(deps.config.http.publicUrl, row.domain),
  note: row.note,
  createdAt: row.created_at.toISOString(),
});

const SELECT = sql`SELECT t.*, d.domain AS sender_domain FROM tracking_domains t JOIN domains d ON d.id = t.domain_id`;

async function findTrackingDomain(db: Queryable, projectId: string, id: string): Promise<TrackingDomainRow> {
  const [row] = isUuid(id)
    ? await queryRows<TrackingDomainRow>(db, sql`${SELECT} WHERE t.project_id = ${projectId} AND t.id = ${id}`)
    : [];
  if (!row) throw notFound('Tracking domain');
  return row;
}

const refused = (domain: string, message: string, code: string) =>
  validationFailed([{ field: 'domain', message, code, received: domain }]);

/**
 * Adds a tracking domain to the sender domain it is a subdomain of (the longest one of the
 * project's): the sender domain's DKIM verification is this project's proof of owning the name,
 * which a CNAME alone is not (anyone can point a name at Pigeon). It is used once verified.
 */
export async function createTrackingDomain(deps: AppDeps, projectId: string, body: { domain: string }) {
  const db = deps.db.pool;
  if (body.domain === publicHost(deps)) {
    throw refused(body.domain, "A tracking domain cannot be Pigeon's own public host", 'public_host');
  }
  const [sender] = await queryRows<{ id: string }>(
    db,
    sql`SELECT id FROM domains WHERE project_id = ${projectId} AND ${body.domain} LIKE '%.' || domain
        ORDER BY length(domain) DESC LIMIT 1`,
  );
  if (!sender) {
    throw refused(
      body.domain,
      `${body.domain} is not a subdomain of a sender domain of this project: add the sender domain under /domains first (links.example.com for example.com)`,
      'not_a_subdomain',
    );
  }
  try {
    const [row] = await queryRows<{ id: string }>(
      db,
      sql`INSERT INTO tracking_domains (id, project_id, domain_id, domain)
          VALUES (${uuidv7()}, ${projectId}, ${sender.id}, ${body.domain}) RETURNING id`,
    );
    return toDto(deps, await findTrackingDomain(db, projectId, (row as { id: string }).id));
  } catch (err) {
    const constraint = (err as DatabaseError).constraint;
    if (constraint === 'tracking_domains_one_per_sender') {
      throw conflict('This sender domain already has a tracking domain: delete it first');
    }
    if (constraint === 'tracking_domains_project_domain')
      throw conflict('The project already has this tracking domain');
    throw err;
  }
}

export async function listTrackingDomains(deps: AppDeps, projectId: string) {
  const rows = await queryRows<TrackingDomainRow>(
    deps.db.pool,
    sql`${SELECT} WHERE t.project_id = ${projectId} ORDER BY t.created_at`,
  );
  return { data: rows.map((row) => toDto(deps, row)) };
}

export async function getTrackingDomain(deps: AppDeps, projectId: string, id: string) {
  return toDto(deps, await findTrackingDomain(deps.db.pool, projectId, id));
}

/** What DNS says of the CNAME: it names Pigeon's public host, names another, or is not there. */
async function checkCname(deps: AppDeps, domain: string): Promise<DnsRecordStatus> {
  const expected = publicHost(deps).toLowerCase();
  const targets = await createResolver(deps.config.dns.servers)
    .resolveCname(domain)
    .catch(() => [] as string[]); // NXDOMAIN, no data, timeout: not (yet) visible
  if (targets.length === 0) return 'missing';
  return targets.some((t) => t.toLowerCase().replace(/\.$/, '') === expected) ? 'verified' : 'mismatch';
}

/**
 * Checks the CNAME now. It verifies while it names Pigeon's public host, the sender domain is
 * verified in this project and no other project has verified the same name; a failing check
 * takes a verified tracking domain out of use (new mail goes back to `PUBLIC_URL`; links already
 * sent keep working, they are signed and answered on any host).
 */
export async function verifyTrackingDomain(deps: AppDeps, projectId: string, id: string) {
  const db = deps.db.pool;
  const row = await findTrackingDomain(db, projectId, id);
  const status = await checkCname(deps, row.domain);
  const [sender] = await queryRows<{ verified: boolean }>(
    db,
    sql`SELECT verified_at IS NOT NULL AS verified FROM domains WHERE id = ${row.domain_id}`,
  );
  const taken = await verifiedElsewhere(db, projectId, row.domain);
  const verifies = status === 'verified' && sender?.verified === true && !taken;
  const note = verifies
    ? null
    : taken
      ? 'Another project has verified this tracking domain.'
      : status !== 'verified'
        ? `Publish a CNAME record from ${row.domain} to ${publicHost(deps)} (DNS can take a while).`
        : `The sender domain ${row.sender_domain} is not verified yet.`;
  const update = () =>
    runStatement(
      db,
      sql`UPDATE tracking_domains SET last_checked_at = now(), record_status = ${status}, note = ${note},
            verified_at = CASE WHEN ${verifies}::boolean THEN coalesce(verified_at, now()) END
          WHERE id = ${row.id}`,
    );
  try {
    await update();
  } catch (err) {
    // Another project verified the same name between the check and the update.
    if ((err as DatabaseError).constraint !== 'tracking_domains_verified_once') throw err;
    return verifyTrackingDomain(deps, projectId, id);
  }
  return toDto(deps, await findTrackingDomain(db, projectId, id));
}

/** The periodic job's part: pending tracking domains are checked again (every 5 minutes, as pending sender domains). */
export async function recheckPendingTrackingDomains(deps: AppDeps): Promise<number> {
  const pending = await queryRows<{ id: string; project_id: string }>(
    deps.db.pool,
    sql`SELECT id, project_id FROM tracking_domains WHERE verified_at IS NULL
        ORDER BY last_checked_at NULLS FIRST LIMIT 500`,
  );
  let verified = 0;
  for (const row of pending) {
    const checked = await verifyTrackingDomain(deps, row.project_id, row.id).catch((err) => {
      deps.logger.warn({ err, trackingDomainId: row.id }, 'tracking domain check failed');
      return undefined;
    });
    if (checked?.status === 'verified') verified++;
  }
  return verified;
}

async function verifiedElsewhere(db: Queryable, projectId: string, domain: string): Promise<boolean> {
  const rows = await queryRows(
    db,
    sql`SELECT 1 FROM tracking_domains WHERE domain = ${domain} AND verified_at IS NOT NULL AND project_id <> ${projectId}`,
  );
  return rows.length > 0;
}

/** Removes it: new mail uses `PUBLIC_URL` again; links already sent on it still resolve (signed, any host). */
export async function deleteTrackingDomain(deps: AppDeps, projectId: string, id: string): Promise<void> {
  const row = await findTrackingDomain(deps.db.pool, projectId, id);
  await runStatement(deps.db.pool, sql`DELETE FROM tracking_domains WHERE id = ${row.id}`);
}
