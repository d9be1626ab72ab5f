import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const INSTALL = join(REPO, 'scripts/install-prometheus.sh');

const onPath = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;

/**
 * Debian's `prometheus` package (server and promtool), installed by the repository's script when
 * missing. Returns why it is not there when it cannot be installed; in CI that is an error instead.
 */
export function ensurePrometheus(): { ok: true } | { ok: false; why: string } {
  if (onPath('prometheus') && onPath('promtool')) return { ok: true };
  const run = spawnSync(INSTALL, { encoding: 'utf8', timeout: 300_000 });
  if (run.status === 0 && onPath('prometheus') && onPath('promtool')) return { ok: true };
  const why = `Prometheus is not installed and scripts/install-prometheus.sh could not install it: ${(run.stderr || run.error?.message || '').trim()}`;
  if (process.env.CI) throw new Error(why);
  return { ok: false, why };
}

export interface TestPrometheus {
  url: string;
  /** An instant PromQL query; its vector (or scalar as a one-sample vector). */
  query(expr: string): Promise<Array<{ metric: Record<string, string>; value: number }>>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read Prometheus' JSON answers as they come
  get(path: string): Promise<any>;
  stop(): Promise<void>;
}

/** A real Prometheus on loopback scraping `targets` (host:port) every second, with `ruleFiles` loaded. */
export async function startPrometheus(opts: { targets: string[]; ruleFiles?: string[] }): Promise<TestPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-prometheus-'));
  const port = await freePort();
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      '  evaluation_interval: 1s',
      `rule_files: ${JSON.stringify(opts.ruleFiles ?? [])}`,
      'scrape_configs:',
      '  - job_name: pigeon',
      `    static_configs: [{ targets: ${JSON.stringify(opts.targets)} }]`,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (d) => (log += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`Prometheus did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const get = async (path: string) => {
    const res = await fetch(`${url}${path}`);
    // biome-ignore lint/suspicious/noExplicitAny: tests read Prometheus' JSON answers as they come
    const body = (await res.json()) as { status: string; data: any; error?: string };
    if (body.status !== 'success') throw new Error(`Prometheus ${path}: ${body.error}`);
    return body.data;
  };
  return {
    url,
    get,
    stop,
    query: async (expr) => {
      const data = await get(`/api/v1/query?query=${encodeURIComponent(expr)}`);
      if (data.resultType === 'scalar') return [{ metric: {}, value: Number(data.result[1]) }];
      return (data.result as Array<{ metric: Record<string, string>; value: [number, string] }>).map((r) => ({
        metric: r.metric,
        value: Number(r.value[1]),
      }));
    },
  };
}
