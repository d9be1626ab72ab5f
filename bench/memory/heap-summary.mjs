// Summarises a V8 heap snapshot (`.heapsnapshot`, from `node --heapsnapshot-signal` or
// `v8.writeHeapSnapshot`) without Chrome DevTools: self size by node type, and the largest
// groups by constructor (objects) or type (strings, code, arrays…).
//
//   node bench/memory/heap-summary.mjs SNAPSHOT [--top N] [--since EARLIER.heapsnapshot]
//
// `--since` keeps only the objects that were not in an earlier snapshot of the same process
// (object ids are stable within a process): what was allocated in between and is still alive.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, since: { type: 'string' } },
});
if (!positionals[0]) {
  console.error('usage: heap-summary.mjs SNAPSHOT [--top N] [--since EARLIER.heapsnapshot]');
  process.exit(2);
}

function load(file) {
  const snap = JSON.parse(readFileSync(file, 'utf8'));
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  return {
    snap,
    width: fields.length,
    at: Object.fromEntries(fields.map((f, i) => [f, i])),
    types,
  };
}

function ids(file) {
  const { snap, width, at } = load(file);
  const out = new Set();
  for (let i = 0; i < snap.nodes.length; i += width) out.add(snap.nodes[i + at.id]);
  return out;
}

const earlier = args.since ? ids(args.since) : undefined;
const { snap, width, at, types } = load(positionals[0]);
const byType = new Map();
const byGroup = new Map();
let total = 0;
let count = 0;
for (let i = 0; i < snap.nodes.length; i += width) {
  if (earlier?.has(snap.nodes[i + at.id])) continue;
  const type = types[snap.nodes[i + at.type]];
  const size = snap.nodes[i + at.self_size];
  const name = snap.strings[snap.nodes[i + at.name]];
  total += size;
  count++;
  add(byType, type, size);
  const group =
    type === 'object' || type === 'closure' ? `${type} ${name}` : type === 'native' ? `native ${name}` : type;
  add(byGroup, group.slice(0, 90), size);
}

function add(map, key, size) {
  const entry = map.get(key) ?? { size: 0, count: 0 };
  entry.size += size;
  entry.count++;
  map.set(key, entry);
}

const mb = (b) => (b / 1048576).toFixed(2);
const table = (title, map, top) => {
  console.log(`\n| ${title} | self size MB | share | count |\n|---|---:|---:|---:|`);
  for (const [key, { size, count }] of [...map].sort((a, b) => b[1].size - a[1].size).slice(0, top)) {
    console.log(`| ${key.replaceAll('|', '\\|')} | ${mb(size)} | ${((100 * size) / total).toFixed(1)}% | ${count} |`);
  }
};
console.log(`${positionals[0]}${args.since ? ` (objects not in ${args.since})` : ''}: ${count} nodes, ${mb(total)} MB`);
table('node type', byType, 20);
table('constructor / type', byGroup, Number(args.top));
