import type { SendWarning } from '@pigeon/contract';

/** Variables that rendered empty; names sent at the top level (Plunk's wiki style) are pointed to `data`. */
export function missingVariableWarnings(missing: Iterable<string>, raw: unknown): SendWarning[] {
  const topLevel = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  return [...missing].map((variable) => ({
    code: 'missing_variable',
    field: variable,
    message:
      variable in topLevel && variable !== 'data'
        ? `{{${variable}}} had no value and rendered empty: \`${variable}\` was sent at the top level, where it is not a variable; put it in \`data\``
        : `{{${variable}}} had no value and rendered empty (give it in \`data\`, or write {{${variable} ?? "fallback"}})`,
  }));
}
