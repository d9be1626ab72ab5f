import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { catalogTable, metricCatalog } from '../src/metrics/catalog.js';
import { labelThisProcess } from '../src/metrics/registry.js';
import { REPO } from './prometheus.js';

const between = (text: string, start: string, end: string) => text.split(start)[1]?.split(end)[0]?.trim() ?? '';

describe('the metric list in docs/operating.md', () => {
  it("is exactly the registry's metrics (name, type, labels, meaning)", async () => {
    labelThisProcess('catalog-test');
    const expected = catalogTable(await metricCatalog());
    const page = readFileSync(`${REPO}/docs/operating.md`, 'utf8');
    // On a mismatch the diff shows the table to paste into docs/operating.md (and README.md's copy).
    expect(between(page, '<!-- metrics:start -->', '<!-- metrics:end -->')).toBe(expected);
  });
});
