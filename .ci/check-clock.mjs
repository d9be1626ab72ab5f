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
import { checkAllowListed, sourceFiles } from './server-sources.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(root, 'packages/server/src');

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

const { problems, summary } = checkAllowListed({
  root,
  files: sourceFiles(SRC),
  findings,
  list: '.ci/clock-allow-list.txt',
  over: (file, n, limit) =>
    `${file}: ${n} read(s) of the machine's clock, ${limit} allowed. Use deps.clock (kit/clock.ts) for a decision; an elapsed-time measurement goes in .ci/clock-allow-list.txt:`,
});
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`clock check: decisions read deps.clock (${summary.replace('allow-listed', 'allow-listed reads')})`);
