// Summary of a V8 .cpuprofile (node --cpu-prof): where the self time went, by package and by
// function. For `run.mjs --cpu-prof`, which starts Pigeon with --cpu-prof.
import { readFileSync } from 'node:fs';

/** `node_modules/.pnpm/x@1/node_modules/@scope/pkg/…` → `@scope/pkg`; Pigeon's own code; node internals. */
function packageOf(url) {
  if (!url) return '(native / V8)';
  const i = url.lastIndexOf('node_modules/');
  if (i >= 0) {
    const rest = url.slice(i + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return 'node (internal)';
  const pkg = /\/packages\/([^/]+)\//.exec(url)?.[1];
  return pkg ? `pigeon ${pkg}` : url;
}

/**
 * Self time by package and the top functions, as text. Samples spent idle (`(idle)`) are left out
 * of the percentages, which are of the busy time.
 */
export function summarizeCpuProfile(file, { top = 25 } = {}) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map(); // node id → µs
  for (const [i, id] of profile.samples.entries()) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const byFunction = new Map();
  const byPackage = new Map();
  let busy = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const { callFrame: f } = byId.get(id);
    if (f.functionName === '(idle)') {
      idle += us;
      continue;
    }
    busy += us;
    const short = f.url ? f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/packages\//, '') : '';
    const key = `${f.functionName || '(anonymous)'} ${short ? `${short}:${f.lineNumber + 1}` : ''}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const pkg = f.url ? packageOf(f.url) : f.functionName.startsWith('(') ? f.functionName : '(native / V8)';
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  }
  const pct = (us) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
  const lines = [
    `busy ${(busy / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s of the profiled lifetime; self time by package:`,
  ];
  for (const [k, us] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 15)) lines.push(`${pct(us)}  ${k}`);
  lines.push('', `top ${top} functions by self time:`);
  for (const [k, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${pct(us)}  ${k}`);
  return lines.join('\n');
}
