import type { DnsRecordPurpose, DnsRecordStatus, TrackingMode } from '@pigeon/contract';
import type { DatabaseError } from 'pg';
import { uuidv7 } from 'uuidv7';
import { keyringOf } from '../../db/at-rest.js';
import { preparedRows, queryRows, runStatement, sql } from '../../db/query.js';
import { findInProject } from '../../db/scoped.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { AppError, conflict, notFound } from '../../kit/errors.js';
import { dmarcReportAddress } from '../dmarc-reports/public.js';
import { generateDkimKeys } from './dkim.js';
import { checkRecords, createResolver, expectedRecords } from './dns-check.js';
import { sealDkimKey } from './key-storage.js';

export interface DomainRow {
  id: string;
  project_id: string;
  domain: string;
  dkim_selector: string;
  dkim_private_key: string;
  dkim_public_key: string;
  verified_at: Date | null;
  last_checked_at: Date | null;
  record_status: Partial<Record<DnsRecordPurpose, DnsRecordStatus>>;
  note: string | null;
  created_at: Date;
}

/** `reportAddress`: the rua of the DMARC suggestion (`dmarcReportAddress`), null for the domain's own mailbox. */
export const toDomainDto = (d: DomainRow, reportAddress: string | null = null) => ({
  id: d.id,
  domain: d.domain,
  status: d.verified_at ? ('verified' as const) : ('pending' as const),
  verifiedAt: d.verified_at?.toISOString() ?? null,
  lastCheckedAt: d.last_checked_at?.toISOString() ?? null,
  dkimSelector: d.dkim_selector,
  records: expectedRecords(d, reportAddress).map((r) => ({
    ...r,
    status: d.record_status[r.purpose] ?? ('unchecked' as const),
  })),
  note: d.note,
  createdAt: d.created_at.toISOString(),
});

async function verifiedElsewhere(db: Queryable, projectId: string, domain: string): Promise<boolean> {
  const rows = await queryRows(
    db,
    sql`SELECT 1 FROM domains WHERE domain = ${domain} AND verified_at IS NOT NULL AND project_id <> ${projectId}`,
  );
  return rows.length > 0;
}

/**
 * Adds a domain with a new DKIM key. With the local outbox nothing leaves the machine, so the
 * domain is verified at once (and says so); otherwise it waits for its DNS records. A domain
 * another project has verified is added like any domain whose records are not published yet:
 * the answer does not tell a project what other projects hold. It verifies only if this project
 * publishes its key and the other project lets the domain go.
 */
export async function createDomain(deps: AppDeps, projectId: string, domain: string) {
  const db = deps.db.pool;
  const keys = await generateDkimKeys();
  const outbox = deps.mailer.kind === 'outbox';
  const privateKey = sealDkimKey(keys.privateKey, keyringOf(deps.config));
  const insert = async (verified: boolean) => {
    const note = verified
      ? 'Verified on creation: mail goes to the local outbox and never leaves this machine. Publish the records before configuring SMTP_URL.'
      : null;
    const [row] = await queryRows<DomainRow>(
      db,
      sql`INSERT INTO domains (id, project_id, domain, dkim_selector, dkim_private_key, dkim_public_key, verified_at, note)
          VALUES (${uuidv7()}, ${projectId}, ${domain}, ${keys.selector}, ${privateKey}, ${keys.publicKey},
                  CASE WHEN ${verified}::boolean THEN now() END, ${note}) RETURNING *`,
    );
    return row as DomainRow;
  };
  const verifyNow = outbox && !(await verifiedElsewhere(db, projectId, domain));
  try {
    return toDomainDto(await insert(verifyNow), dmarcReportAddress(deps.config));
  } catch (err) {
    // Another project verified it in the meantime: add it unverified, as above.
    if ((err as DatabaseError).constraint !== 'domains_verified_once') throw err;
    return toDomainDto(await insert(false), dmarcReportAddress(deps.config));
  }
}

export async function listDomains(deps: Pick<AppDeps, 'db' | 'config'>, callerProjectId: string, projectId: string) {
  if (projectId !== callerProjectId) throw notFound('Project');
  const rows = await queryRows<DomainRow>(
    deps.db.pool,
    sql`SELECT * FROM domains WHERE project_id = ${projectId} ORDER BY created_at`,
  );
  return rows.map((row) => toDomainDto(row, dmarcReportAddress(deps.config)));
}

const findDomain = (db: Queryable, projectId: string, id: string) =>
  findInProject<DomainRow>(db, 'domains', projectId, id, 'Domain');

/** Checks DNS now and records the result; DKIM publishing our key verifies the domain. */
export async function verifyDomain(deps: AppDeps, projectId: string, id: string) {
  const db = deps.db.pool;
  const domain = await findDomain(db, projectId, id);
  return toDomainDto(await recheck(deps, domain), dmarcReportAddress(deps.config));
}

export async function recheck(deps: AppDeps, domain: DomainRow): Promise<DomainRow> {
  const db = deps.db.pool;
  const status = await checkRecords(createResolver(deps.config.dns.servers), domain);
  const passes = status.dkim === 'verified';
  const taken = passes && !domain.verified_at && (await verifiedElsewhere(db, domain.project_id, domain.domain));
  const verifies = passes && !taken;
  const keepsVerification = deps.mailer.kind === 'outbox';
  const note = taken
    ? 'Another project has verified this domain.'
    : passes
      ? null
      : 'The DKIM record is not published yet (DNS can take a while).';
  const [row] = await queryRows<DomainRow>(
    db,
    sql`UPDATE domains SET last_checked_at = now(), record_status = ${JSON.stringify(status)},
          verified_at = CASE WHEN ${verifies}::boolean THEN coalesce(verified_at, now())
                             WHEN ${keepsVerification}::boolean THEN verified_at ELSE NULL END,
          note = ${note}
        WHERE id = ${domain.id} RETURNING *`,
  );
  return row as DomainRow;
}

export async function deleteDomain(db: Queryable, projectId: string, id: string): Promise<void> {
  const domain = await findDomain(db, projectId, id);
  const rows = await queryRows<{ name: string }>(
    db,
    sql`SELECT name FROM templates WHERE project_id = ${projectId} AND split_part(from_email, '@', 2) = ${domain.domain} LIMIT 5`,
  );
  if (rows.length > 0) {
    throw conflict('Templates still send from this domain', { details: { templates: rows.map((r) => r.name) } });
  }
  await runStatement(db, sql`DELETE FROM domains WHERE id = ${domain.id}`);
}

/** What sending needs to know about a verified sender: its domain and the project's sending settings. */
export interface VerifiedSender {
  domain: string;
  trackingMode: TrackingMode;
  unsubscribeMailbox: string | null;
  /** The verified tracking domain of the sender domain: its mail's open and click links use it. */
  trackingHost: string | null;
}

/** The verified domain a sender address belongs to, with the project's settings; otherwise the spec's 403. */
export async function requireVerifiedSender(db: Queryable, projectId: string, from: string): Promise<VerifiedSender> {
  const domain = from.split('@')[1]?.toLowerCase() ?? '';
  const rows = await preparedRows<VerifiedSender>(
    db,
    'domains.verified-sender',
    sql`SELECT d.domain, p.tracking_mode AS "trackingMode", p.unsubscribe_mailbox AS "unsubscribeMailbox",
               t.domain AS "trackingHost"
        FROM domains d JOIN projects p ON p.id = d.project_id
        LEFT JOIN tracking_domains t ON t.domain_id = d.id AND t.verified_at IS NOT NULL
        WHERE d.project_id = ${projectId} AND d.domain = ${domain} AND d.verified_at IS NOT NULL`,
  );
  if (!rows[0]) {
    throw new AppError(
      'forbidden',
      'INTERNAL_SERVER_ERROR',
      `The sender domain ${domain} is not verified for this project`,
      {
        details: { reason: 'DOMAIN_NOT_VERIFIED', domain },
        suggestion: `Add ${domain} with POST /domains, publish its DNS records, then check it with GET /domains/:id/verify.`,
      },
    );
  }
  return rows[0];
}
