#!/usr/bin/env node
/**
 * Tests call the API through the typed client, `api(pigeon, headers)` from test/api.ts. An untyped
 * `request(…)` / `x.request(…)` call in a test file (packages/server/src/**\/*.test.ts and
 * packages/server/test) is refused unless the line above it says why it must stay untyped:
 * `// untyped: <reason>` (a request wrong on purpose, a path outside the contract, a raw body, the
 * HTTP layer itself). test/helpers.ts, which defines `pigeon.request`, is exempt. Run by
 * `pnpm lint`; `--reasons` prints the marked calls grouped by reason.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { testFiles } from './server-sources.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SERVER = join(root, 'packages/server');
const EXEMPT = join(SERVER, 'test/helpers.ts');
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

const problems = [];
const reasons = new Map();
for (const path of testFiles(SERVER)) {
  if (path === EXEMPT) continue;
  for (const { where, reason } of requestCalls(path)) {
    if (reason === undefined)
      problems.push(
        `${where}: untyped request. Use api(pigeon, headers) from test/api.ts, or say why on the line above: "// untyped: <reason>"`,
      );
    else if (reason === '') problems.push(`${where}: "// untyped:" without a reason`);
    else reasons.set(reason, [...(reasons.get(reason) ?? []), where]);
  }
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
const marked = [...reasons.values()].reduce((a, b) => a + b.length, 0);
console.log(`Test request check: no unmarked untyped request (${marked} marked, each with its reason)`);
