import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../test/prometheus.js';
import { catalogTable, metricCatalog } from './catalog.js';
import { labelThisProcess } from './registry.js';

const operatingPage = () => readFileSync(`${REPO}/docs/operating.md`, 'utf8');
const between = (text: string, start: string, end: string) => text.split(start)[1]?.split(end)[0]?.trim() ?? '';

/** Every metric name a PromQL text mentions. */
const metricNames = (text: string) => new Set(text.match(/\bpigeon_[a-z0-9_]+/g) ?? []);

describe('the metric list', () => {
  it("docs/operating.md's metric table is exactly the registry's metrics (name, type, labels, meaning)", async () => {
    labelThisProcess('catalog-test');
    const expected = catalogTable(await metricCatalog());
    const documented = between(operatingPage(), '<!-- metrics:start -->', '<!-- metrics:end -->');
    // On a mismatch the diff shows the table to paste into docs/operating.md.
    expect(documented).toBe(expected);
  });

  it('follows the naming rules: pigeon_ prefix, _total counters, base units, no unbounded labels', async () => {
    labelThisProcess('catalog-test');
    const catalog = await metricCatalog();
    expect(catalog.length).toBeGreaterThan(40);
    for (const m of catalog) {
      expect(m.name).toMatch(/^pigeon_[a-z0-9_]+$/);
      if (m.type === 'counter') expect(m.name).toMatch(/_total$/);
      expect(m.name).not.toMatch(/_(milliseconds|ms|kilobytes|megabytes|minutes)(_|$)/);
      for (const label of m.labels) expect(['project', 'project_id', 'email', 'event', 'contact']).not.toContain(label);
    }
  });

  it('the alert rules and the dashboard name only metrics Pigeon exports', async () => {
    labelThisProcess('catalog-test');
    const exported = new Set<string>();
    for (const m of await metricCatalog()) {
      exported.add(m.name);
      if (m.type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) exported.add(m.name + s);
    }
    const used = new Set([
      ...metricNames(readFileSync(`${REPO}/deploy/prometheus/alerts.yml`, 'utf8')),
      ...metricNames(readFileSync(`${REPO}/deploy/grafana/pigeon-dashboard.json`, 'utf8')),
    ]);
    expect(used.size).toBeGreaterThan(20);
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
  });
});
