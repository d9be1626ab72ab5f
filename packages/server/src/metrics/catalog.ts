import { allRegistries, processMetrics } from './registry.js';

export interface CatalogEntry {
  name: string;
  type: string;
  labels: string[];
  help: string;
}

interface Described {
  get(): Promise<{ name: string; type: unknown; help: string }>;
  labelNames?: string[];
}

/** Every metric Pigeon exports, as README's "Monitoring" table lists them (once Node's defaults are on). */
export async function metricCatalog(): Promise<CatalogEntry[]> {
  const entries = await Promise.all(
    allRegistries.flatMap((registry) =>
      registry.getMetricsAsArray().map(async (m) => {
        // Every prom-client metric object has these, though its declared type does not say so.
        const metric = m as unknown as Described;
        const { name, type, help } = await metric.get();
        const own = metric.labelNames ?? [];
        const labels = registry === processMetrics ? ['process', ...own] : [...own];
        return { name, type: String(type), labels, help };
      }),
    ),
  );
  return entries.sort((a, b) => a.name.localeCompare(b.name));
}

/** The catalog as the Markdown table README carries between its `metrics` markers. */
export function catalogTable(entries: CatalogEntry[]): string {
  const cell = (s: string) => s.replaceAll('|', '\\|');
  return [
    '| Metric | Type | Labels | Meaning |',
    '|---|---|---|---|',
    ...entries.map(
      (e) => `| \`${e.name}\` | ${e.type} | ${e.labels.map((l) => `\`${l}\``).join(', ') || '—'} | ${cell(e.help)} |`,
    ),
  ].join('\n');
}
