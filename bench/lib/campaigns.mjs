// Helpers of the campaign scenario (campaign-100k): the campaign's content (the ceilings' message,
// baselines/_campaign-message.mjs, renders it too), the runs of the bare ceiling
// (baselines/bare-nodemailer.mjs) and of the same-work one (baselines/bare-durable-delivery.mjs,
// with its scratch table), and Pigeon's node processes (the main one and any worker children) from /proc.
import { readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { queueTableSql } from '../baselines/_claim-loop.mjs';
import { runTogether } from './ceilings.mjs';

export const CAMPAIGN_SUBJECT = 'Hi {{firstName ?? "there"}}, our spring launch is here';

/**
 * The campaign's HTML (about 2 KB before rendering): one ordinary link (click-tracked by Pigeon
 * when tracking is on, the project default) and `{{unsubscribeUrl}}`, plus the first name.
 */
export const CAMPAIGN_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Spring launch</title></head>
<body style="margin:0;padding:0;background:#f4f4f7;font-family:Helvetica,Arial,sans-serif;color:#222">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">
<table role="presentation" width="600" cellpadding="24" cellspacing="0" style="background:#ffffff;border-radius:8px">
<tr><td>
<h1 style="font-size:24px;margin:0 0 16px">Hello {{firstName ?? "there"}},</h1>
<p style="font-size:16px;line-height:1.5">Our spring release is out today. It brings faster search across every list,
a new editor for your templates with live previews, and scheduling that respects each recipient's time zone, so
your newsletter lands in the morning wherever people read it.</p>
<p style="font-size:16px;line-height:1.5">We also rebuilt the reports: every campaign now shows deliveries, opens
and clicks as they happen, and you can export any of them to a spreadsheet with one click. Teams asked for shared
drafts, so drafts can now be edited by everyone in a project, with a history of who changed what.</p>
<p style="text-align:center;margin:28px 0"><a href="https://example.com/launch?utm_source=newsletter&amp;utm_campaign=spring"
 style="background:#3b5bdb;color:#ffffff;padding:12px 22px;border-radius:6px;text-decoration:none;font-weight:bold">See
 what is new</a></p>
<p style="font-size:16px;line-height:1.5">As always, the update is free for every plan and already active on your
account. Questions? Reply to this email: a person reads every answer.</p>
<p style="font-size:16px;line-height:1.5">Thanks for being with us,<br>The Bench team</p>
</td></tr>
<tr><td style="font-size:12px;color:#888;text-align:center;line-height:1.4">You get this email because you signed up
at bench.example. <a href="{{unsubscribeUrl}}" style="color:#888">Unsubscribe</a> at any time.<br>Bench Inc.,
1 Example Street, Springfield</td></tr>
</table></td></tr></table>
</body></html>`;

/** Pigeon's DKIM header list (packages/server/src/modules/emails/delivery.ts): keep them in step. */
export const DKIM_SIGNED_HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'In-Reply-To',
  'References',
  'List-Id',
  'List-Help',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'List-Subscribe',
  'List-Post',
  'List-Owner',
  'List-Archive',
  'Feedback-ID',
].join(':');

const perProcess = (results) =>
  results.map((r) => ({
    sent: r.sent,
    seconds: r.seconds,
    messagesPerSec: r.messagesPerSec,
    cpuSeconds: r.cpuSeconds,
    peakRssMb: r.peakRssMb,
  }));

/**
 * Runs baselines/bare-nodemailer.mjs in `processes` processes at once (each `count` messages into
 * `smtpUrl`, `inFlight` at a time), all starting at the same instant. Returns each process's
 * result and the aggregate rate: all messages ÷ (common start → the last process's last reply),
 * with the whole machine's busy CPU seconds over that window (`machineCpuSeconds`).
 * Bounded: a process that has not finished within `timeoutMs` is stopped and the run throws.
 */
export async function runBareNodemailer({ smtpUrl, processes, count, inFlight, timeoutMs = 180_000 }) {
  const run = await runTogether({
    script: 'bare-nodemailer',
    processes,
    env: () => ({ SMTP_URL: smtpUrl, COUNT: String(count), IN_FLIGHT: String(inFlight) }),
    timeoutMs,
  });
  return { ...run, results: undefined, perProcess: perProcess(run.results) };
}

// ---- the same-work ceiling: bare nodemailer + the durable claim/record (issue 62) ---------------

/** The scratch table of baselines/bare-durable-delivery.mjs, in Pigeon's database. */
export const DURABLE_EMAILS = 'bench_durable_emails';
export const DURABLE_DOMAIN = 'durable.example';

/**
 * Creates the ceiling's scratch table (dropped first) and queues `total` rows in it, the way the
 * campaign's audience is seeded: `d<i>@durable.example`, a first name on 3 of 4; VACUUM ANALYZE.
 */
export async function seedDurableEmails(sql, total) {
  for (const statement of queueTableSql(DURABLE_EMAILS, 'recipient text NOT NULL, first_name text'))
    await sql(statement);
  await sql(
    `INSERT INTO ${DURABLE_EMAILS} (recipient, first_name)
     SELECT 'd' || i || '@${DURABLE_DOMAIN}', CASE WHEN i % 4 = 0 THEN NULL ELSE 'Name' || i END
     FROM generate_series(0, $1::int - 1) AS i`,
    [total],
  );
  await sql(`VACUUM (ANALYZE) ${DURABLE_EMAILS}`);
}

/**
 * Runs baselines/bare-durable-delivery.mjs in `processes` processes at once on the seeded scratch
 * table (`pg`: BASELINE_PG of the Pigeon under test), `inFlight` sends at a time each, into
 * `smtpUrl`. The same aggregate as {@link runBareNodemailer}, plus the claims and records made.
 */
export async function runDurableDelivery({ smtpUrl, pg, processes, inFlight, timeoutMs = 600_000 }) {
  const run = await runTogether({
    script: 'bare-durable-delivery',
    processes,
    env: () => ({ SMTP_URL: smtpUrl, BASELINE_PG: pg, TABLE: DURABLE_EMAILS, IN_FLIGHT: String(inFlight) }),
    timeoutMs,
  });
  return {
    ...run,
    results: undefined,
    perProcess: perProcess(run.results),
    claims: run.results.reduce((n, r) => n + r.claims, 0),
    records: run.results.reduce((n, r) => n + r.records, 0),
  };
}

export const dropDurableEmails = (sql) => sql(`DROP TABLE IF EXISTS ${DURABLE_EMAILS}`);

/**
 * The ceiling's correctness: every row SENT with a sent_at, and the sink (reset before the run) has
 * exactly one DKIM-signed message per row's recipient and nothing else. Throws otherwise; returns
 * the counts.
 */
export async function checkDurableDelivery(sql, sink, total) {
  const { rows } = await sql(
    `SELECT count(*)::int AS rows, count(*) FILTER (WHERE status = 'SENT' AND sent_at IS NOT NULL)::int AS sent
     FROM ${DURABLE_EMAILS}`,
  );
  const messages = await sink.messages();
  const perRecipient = new Map();
  for (const m of messages) perRecipient.set(m.to, (perRecipient.get(m.to) ?? 0) + 1);
  let delivered = 0;
  for (let i = 0; i < total; i++) if (perRecipient.has(`d${i}@${DURABLE_DOMAIN}`)) delivered++;
  const counts = {
    rows: rows[0].rows,
    sent: rows[0].sent,
    received: messages.length,
    duplicates: messages.length - perRecipient.size,
    missing: total - delivered,
    unexpected: perRecipient.size - delivered,
    withoutDkim: messages.filter((m) => !m.dkim).length,
  };
  if (
    counts.rows !== total ||
    counts.sent !== total ||
    counts.duplicates ||
    counts.missing ||
    counts.unexpected ||
    counts.withoutDkim
  )
    throw new Error(`bare-durable-delivery is not correct: ${JSON.stringify(counts)}`);
  return counts;
}

// ---- Pigeon's node processes ---------------------------------------------------------------

const childrenOf = (pid) => {
  const out = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        for (const c of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/))
          if (c) out.push(Number(c));
      } catch {} // the thread ended meanwhile
    }
  } catch {} // the process ended meanwhile
  return out;
};

let nodeExe;
/** Whether `pid` is a node process (not PostgreSQL, which Pigeon starts as its child too). */
function isNode(pid) {
  nodeExe ??= realpathSync(process.execPath);
  try {
    return realpathSync(`/proc/${pid}/exe`) === nodeExe;
  } catch {
    // Not allowed to read another user's exe link: its command line then.
    try {
      const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
      return /^node(js)?$/.test(basename(argv0));
    } catch {
      return false;
    }
  }
}

/**
 * The node processes below Pigeon's main process (worker children, and theirs), found through
 * /proc/<pid>/task/<tid>/children; PostgreSQL and its backends are left out (and not descended into).
 */
export function nodeDescendants(pid) {
  const found = [];
  const queue = childrenOf(pid);
  while (queue.length) {
    const p = queue.shift();
    if (!isNode(p)) continue;
    found.push(p);
    queue.push(...childrenOf(p));
  }
  return found;
}

/** `{ rssMb, peakRssMb }` (VmRSS, VmHWM) of `pid`, or null when it is gone. */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
    return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/**
 * Resets the peak RSS (VmHWM) of `pid` to its current RSS (`5` into /proc/<pid>/clear_refs,
 * Linux ≥ 4.0), so a later VmHWM is the peak of what came after. False when not allowed.
 */
export function resetPeakRss(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
