import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addresses, campaignToAll } from './campaigns.js';
import { killAllCli, runCli, startCli } from './cli.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import type { TestPigeon } from './helpers.js';
import { freePort } from './ports.js';
import { ensurePrometheus, REPO, startPrometheus, type TestPrometheus } from './prometheus.js';
import { verifiedSender } from './sending.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

const prometheus = ensurePrometheus();
if (!prometheus.ok) console.warn(`prometheus.test.ts skipped: ${prometheus.why}`);

const ALERTS = join(REPO, 'deploy/prometheus/alerts.yml');
const DASHBOARD = join(REPO, 'deploy/grafana/pigeon-dashboard.json');
const RECIPIENTS = 60;

/** Polls a PromQL query until `check` holds for its result (or the deadline passes); returns the last result. */
async function until(prom: TestPrometheus, expr: string, check: (values: number[]) => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const values = (await prom.query(expr)).map((s) => s.value);
    if (check(values) || Date.now() > deadline) return values;
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe.skipIf(!prometheus.ok)('a real Prometheus scraping `pigeon start` (API and a worker process)', () => {
  let sink: SmtpSink;
  let dns: TestDnsServer;
  let prom: TestPrometheus;
  let dir: string;
  let env: Record<string, string>;
  let served: TestPigeon;

  beforeAll(async () => {
    [sink, dns] = await Promise.all([startSmtpSink({ delayMs: 20 }), startDnsServer()]);
    dir = mkdtempSync(join(tmpdir(), 'pigeon-prom-'));
    chmodSync(dir, 0o755);
    const metricsPort = await freePort();
    env = {
      PIGEON_DATA_DIR: dir,
      // A PostgreSQL server of its own (the embedded default), not the suite's shared one: the
      // feed reads below the server-wide snapshot xmin, so another test file's open transaction
      // would hold this feed's lag up for as long as it stays open (ARCHITECTURE.md, Change feed).
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
      WORKER_PROCESSES: '1',
      SMTP_URL: sink.url,
      DNS_SERVERS: dns.address,
      WORKER_HEARTBEAT_SECONDS: '1',
      CAMPAIGN_DISPATCH_INTERVAL_MS: '100',
      // One delivery loop and a slow-ish sink: the campaign stays queued for a few scrapes.
      DELIVERY_CONCURRENCY: '1',
      DELIVERY_RETRY_BASE_MS: '200',
      // The feed is read every 2 s: between reads its lag is visible to a 1 s scrape.
      CHANGE_FEED_POLL_MS: '2000',
      JOB_POLL_INTERVAL_MS: '200',
    };
    const pigeon = startCli(['start'], env);
    const url = await pigeon.ready;
    served = { url } as TestPigeon;
    prom = await startPrometheus({ targets: [`127.0.0.1:${metricsPort}`], ruleFiles: [ALERTS] });
  }, 120_000);
  afterAll(async () => {
    await prom?.stop();
    await killAllCli();
    await Promise.all([sink?.close(), dns?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('scrapes the API process and the worker process through one target', async () => {
    expect(await until(prom, 'up{job="pigeon"}', (v) => v[0] === 1)).toEqual([1]);
    const heap = await until(prom, 'pigeon_nodejs_heap_size_used_bytes', (v) => v.length === 2);
    expect(heap.every((bytes) => bytes > 0)).toBe(true);
    const processes = (await prom.query('pigeon_nodejs_heap_size_used_bytes')).map((s) => s.metric.process).sort();
    expect(processes).toEqual(['api', 'worker-1']);
    expect(await until(prom, 'pigeon_workers_alive', (v) => v[0] === 1)).toEqual([1]);
    expect((await prom.query('pigeon_worker_processes'))[0]?.value).toBe(1);
  });

  it('queue depth, delivery counters and feed lag move as a campaign runs', async () => {
    const run = await campaignToAll(
      served,
      await verifiedSender(served, dns),
      addresses('r', RECIPIENTS, 'prom.example'),
    );
    const sentBefore = (await prom.query('sum(pigeon_delivery_outcomes_total{result="sent"})'))[0]?.value ?? 0;
    sink.failNext(451); // the first message is deferred once: a delivery error to report
    expect((await run.send({})).totalRecipients).toBe(RECIPIENTS);

    // While it runs: campaign mail waits in the queue, then the queue drains.
    expect(
      (await until(prom, 'max_over_time(pigeon_emails_queued{priority="campaign"}[5m])', (v) => (v[0] ?? 0) > 0))[0],
    ).toBeGreaterThan(0);
    const delivered = () => sink.messages.filter((m) => m.to.some((to) => to.endsWith('@prom.example'))).length;
    const deadline = Date.now() + 60_000;
    while (delivered() < RECIPIENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(delivered()).toBe(RECIPIENTS);
    expect(await until(prom, 'pigeon_emails_queued{priority="campaign"}', (v) => v[0] === 0)).toEqual([0]);
    expect(await until(prom, 'pigeon_campaign_recipients_pending', (v) => v[0] === 0)).toEqual([0]);

    // Counted by the worker process, collected through the API process.
    const sentNow = await until(
      prom,
      'pigeon_delivery_outcomes_total{result="sent",process="worker-1"}',
      (v) => (v[0] ?? 0) >= sentBefore + RECIPIENTS,
    );
    expect(sentNow[0]).toBeGreaterThanOrEqual(sentBefore + RECIPIENTS);
    expect(
      (await prom.query('sum(pigeon_delivery_outcomes_total{result="deferred"})'))[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(
      (await prom.query('sum(increase(pigeon_delivery_outcomes_total{result="sent"}[5m]))'))[0]?.value,
    ).toBeGreaterThan(0);
    const latency = await prom.query('pigeon_delivery_transport_duration_seconds_count{transport="smtp"}');
    expect(latency[0]?.value).toBeGreaterThanOrEqual(RECIPIENTS);

    // The contacts' changes and the campaign's events waited for the feed, then it caught up.
    const peak = (await prom.query('max_over_time(max(pigeon_change_feed_lag_seconds)[5m:1s])'))[0]?.value ?? 0;
    expect(peak).toBeGreaterThan(0);
    const now = await until(prom, 'max(pigeon_change_feed_lag_seconds)', (v) => (v[0] ?? Infinity) < peak);
    expect(now[0]).toBeLessThan(peak);
  }, 120_000);

  it('every query of the Grafana dashboard returns a series', async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
    const exprs: string[] = dashboard.panels.flatMap((p: { targets: Array<{ expr: string }> }) =>
      p.targets.map((t) => t.expr),
    );
    expect(exprs.length).toBeGreaterThan(20);
    const empty: string[] = [];
    for (const expr of exprs) {
      const series = await prom.query(expr.replaceAll('$__rate_interval', '1m'));
      if (series.length === 0) empty.push(expr);
    }
    expect(empty).toEqual([]);
  });

  it('the alert rules pass promtool and load and evaluate in Prometheus', async () => {
    const check = spawnSync('promtool', ['check', 'rules', ALERTS], { encoding: 'utf8' });
    expect(check.status, check.stderr).toBe(0);
    const data = await prom.get('/api/v1/rules');
    const rules = data.groups.flatMap((g: { rules: unknown[] }) => g.rules);
    expect(rules.length).toBeGreaterThanOrEqual(10);
    for (const rule of rules) expect(rule, rule.name).toMatchObject({ type: 'alerting', health: 'ok' });
    // Nothing is wrong with this Pigeon: none fires.
    expect(rules.filter((r: { state: string }) => r.state === 'firing').map((r: { name: string }) => r.name)).toEqual(
      [],
    );
  });

  it('`pigeon status` shows the same numbers from another shell', async () => {
    // At the default log level: whatever it logs goes to stderr, stdout is the JSON alone.
    const json = await runCli(['status', '--json'], { ...env, LOG_LEVEL: 'info' });
    expect(json.code, json.stderr).toBe(0);
    const status = JSON.parse(json.stdout);
    expect(status.queue.byPriority.map((q: { priority: string }) => q.priority)).toEqual([
      'transactional',
      'workflow',
      'campaign',
    ]);
    expect(status.workers.filter((w: { alive: boolean }) => w.alive)).toHaveLength(1);
    expect(status.feed.map((f: { consumer: string }) => f.consumer).sort()).toEqual([
      'analytics.counts',
      'segments.membership',
      'webhooks.events',
      'workflows.triggers',
    ]);
    expect(status.lastDeliveryError.message).toMatch(/451/);
    const text = await runCli(['status'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Workers alive: 1');
    expect(text.stdout).toMatch(/campaign\s+0\s/);
    expect(text.stdout).toMatch(/Last delivery error: .*451/);
  });
});
