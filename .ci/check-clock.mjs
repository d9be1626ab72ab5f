#!/usr/bin/env node
/**
 * One clock: refuses `Date.now()` and `new Date()` without arguments in packages/server/src (the
 * time of a decision is `deps.clock.now()` / `deps.clock.nowMs()`, kit/clock.ts, so tests can move
 * it). Elapsed-time measurements and stamps that decide nothing are listed in
 * .ci/clock-allow-list.txt, one file per line with how many such reads it may hold and why; a file
 * may only go down. Run by `pnpm lint` and .ci/run.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { readAllowList, sourceFiles } from './server-sources.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(root, 'packages/server/src');
const ALLOW_LIST = join(root, '.ci/clock-allow-list.txt');

const isDateNow = (node) =>
  ts.isCallExpression(node) &&
  ts.isPropertyAccessExpression(node.expression) &&
  node.expression.expression.getText() === 'Date' &&
  node.expression.name.text === 'now';
const isNewDate = (node) =>
  ts.isNewExpression(node) && node.expression.getText() === 'Date' && (node.arguments?.length ?? 0) === 0;

/** Every read of the machine's clock: `Date.now()` and `new Date()`. */
function findings(path) {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (isDateNow(node) || isNewDate(node)) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      found.push(`${relative(root, path)}:${line + 1}: ${node.getText()}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const allowed = readAllowList(ALLOW_LIST);
const problems = [];
const counted = new Map();
for (const path of sourceFiles(SRC)) {
  const found = findings(path);
  const file = relative(root, path);
  if (found.length) counted.set(file, found.length);
  const limit = allowed.get(file) ?? 0;
  if (found.length > limit) {
    problems.push(
      `${file}: ${found.length} read(s) of the machine's clock, ${limit} allowed. Use deps.clock (kit/clock.ts) for a decision; an elapsed-time measurement goes in .ci/clock-allow-list.txt:`,
      ...found.map((f) => `  ${f}`),
    );
  }
}
for (const [file, limit] of allowed) {
  const n = counted.get(file) ?? 0;
  if (n < limit)
    problems.push(
      `${file}: holds ${n} now; lower its count in .ci/clock-allow-list.txt to ${n}${n ? '' : ' (remove the line)'}`,
    );
}
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
const total = [...counted.values()].reduce((a, b) => a + b, 0);
console.log(`clock check: decisions read deps.clock (${total} allow-listed reads in ${counted.size} files)`);
