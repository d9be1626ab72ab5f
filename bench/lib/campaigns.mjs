// Helpers of the campaign scenario (campaign-100k): the campaign's content, the same message for
// the bare-nodemailer baseline (baselines/bare-nodemailer.mjs), the baseline runs, and Pigeon's
// node processes (the main one and any worker children) from /proc.
import { readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNode } from './process.mjs';

const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

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

/**
 * Runs baselines/bare-nodemailer.mjs in `processes` processes at once (each `count` messages into
 * `smtpUrl`, `inFlight` at a time), all starting at the same instant. Returns each process's
 * result and the aggregate rate: all messages ÷ (common start → the last process's last reply).
 * Bounded: a process that has not finished within `timeoutMs` is stopped and the run throws.
 */
export async function runBareNodemailer({ smtpUrl, processes, count, inFlight, timeoutMs = 180_000 }) {
  const startAt = Date.now() + 3000; // after every process has loaded nodemailer and made its key
  const handles = Array.from({ length: processes }, (_, i) =>
    startNode({
      name: `bare-nodemailer #${i + 1}`,
      args: [join(BENCH_DIR, 'baselines', 'bare-nodemailer.mjs')],
      env: {
        ...process.env,
        SMTP_URL: smtpUrl,
        COUNT: String(count),
        IN_FLIGHT: String(inFlight),
        START_AT: String(startAt),
        PROCESS_INDEX: String(i + 1),
      },
      ready: /^result \{.*\}$/m,
      timeoutMs,
    }),
  );
  try {
    const done = await Promise.all(handles.map((h) => h.ready));
    const results = done.map((h) => JSON.parse(/^result (\{.*\})$/m.exec(h.output())[1]));
    const failed = results.reduce((n, r) => n + r.failed, 0);
    if (failed)
      throw new Error(`bare-nodemailer: ${failed} sends failed: ${results.map((r) => r.firstError).join('; ')}`);
    const sent = results.reduce((n, r) => n + r.sent, 0);
    const end = Math.max(...results.map((r) => r.endAt));
    const start = Math.min(...results.map((r) => r.startAt));
    return {
      processes,
      sent,
      seconds: (end - start) / 1000,
      messagesPerSec: sent / ((end - start) / 1000),
      perProcess: results.map((r) => ({
        sent: r.sent,
        seconds: r.seconds,
        messagesPerSec: r.messagesPerSec,
        cpuSeconds: r.cpuSeconds,
        peakRssMb: r.peakRssMb,
      })),
    };
  } finally {
    await Promise.all(handles.map((h) => h.stop()));
  }
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
