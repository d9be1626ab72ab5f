#!/usr/bin/env node
/**
 * Tests call the API through the typed client, `api(pigeon, headers)` from test/api.ts. An untyped
 * `request(…)` / `x.request(…)` call in a test file (packages/server/src/**\/*.test.ts and
 * packages/server/test) is refused unless the line above it says why it must stay untyped:
 * `// untyped: <reason>` (a request wrong on purpose, a path outside the contract, a raw body, the
 * HTTP layer itself). test/helpers.ts, which defines `pigeon.request`, is exempt. Unmarked calls
 * left from before the check are counted per file in .ci/test-requests-allow-list.txt, which only
 * shrinks. Run by `pnpm lint`; `--reasons` prints the marked calls grouped by reason.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { testFiles } from './server-sources.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SERVER = join(root, 'packages/server');
const EXEMPT = join(SERVER, 'test/helpers.ts');
const ALLOW_LIST = join(root, '.ci/test-requests-allow-list.txt');
const MARK = /^\s*\/\/\s*untyped:(.*)$/;

/** `request(…)` or `<anything>.request(…)`. */
const isRequestCall = (node) =>
  ts.isCallExpression(node) &&
  ((ts.isIdentifier(node.expression) && node.expression.text === 'request') ||
    (ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'request'));

/** Every request call of a file with the reason on the line above it (undefined: unmarked, '': empty). */
function requestCalls(path) {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const calls = [];
  const visit = (node) => {
    if (isRequestCall(node)) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      const reason = MARK.exec(lines[line - 1] ?? '')?.[1].trim();
      calls.push({ where: `${relative(root, path)}:${line + 1}`, reason });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return calls;
}

function allowList() {
  const allowed = new Map();
  if (!existsSync(ALLOW_LIST)) return allowed;
  for (const [n, line] of readFileSync(ALLOW_LIST, 'utf8').split('\n').entries()) {
    const text = line.replace(/#.*/, '').trim();
    if (!text) continue;
    const match = /^(\S+)\s+(\d+)$/.exec(text);
    if (!match) throw new Error(`${ALLOW_LIST}:${n + 1}: expected "<file> <count>"`);
    allowed.set(match[1], Number(match[2]));
  }
  return allowed;
}

const allowed = allowList();
const problems = [];
const unmarked = new Map();
const reasons = new Map();
for (const path of testFiles(SERVER)) {
  if (path === EXEMPT) continue;
  const file = relative(root, path);
  const calls = requestCalls(path);
  for (const { where } of calls.filter((c) => c.reason === '')) {
    problems.push(`${where}: "// untyped:" without a reason`);
  }
  for (const { where, reason } of calls.filter((c) => c.reason)) {
    reasons.set(reason, [...(reasons.get(reason) ?? []), where]);
  }
  const bare = calls.filter((c) => c.reason === undefined);
  if (bare.length) unmarked.set(file, bare.length);
  const limit = allowed.get(file) ?? 0;
  if (bare.length > limit) {
    problems.push(
      `${file}: ${bare.length} untyped request call(s), ${limit} allowed. Use api(pigeon, headers) from test/api.ts, or say why above the call with "// untyped: <reason>":`,
      ...bare.map((c) => `  ${c.where}`),
    );
  }
}
for (const [file, limit] of allowed) {
  const n = unmarked.get(file) ?? 0;
  if (n < limit)
    problems.push(
      `${file}: holds ${n} now; lower its count in ${relative(root, ALLOW_LIST)} to ${n}${n ? '' : ' (remove the line)'}`,
    );
}
if (process.argv.includes('--reasons')) {
  for (const [reason, where] of [...reasons].sort((a, b) => b[1].length - a[1].length)) {
    console.log(`${where.length}\t${reason}`);
  }
}
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
const left = [...unmarked.values()].reduce((a, b) => a + b, 0);
const marked = [...reasons.values()].reduce((a, b) => a + b.length, 0);
console.log(
  `Test request check: ${marked} untyped call(s) with a reason, ${left} allow-listed in ${unmarked.size} files`,
);
