#!/usr/bin/env node
/**
 * One way to write SQL: refuses literal `$1`-style placeholders in string and template literals
 * (write `sql\`… ${value} …\`` from db/query.ts instead) and MikroORM raw `execute` calls with `?`
 * placeholders, in packages/server/src and in the server's tests (`*.test.ts` files of src, all of test/).
 * What is left from before the builder is in .ci/sql-allow-list.txt (sources) and
 * .ci/sql-allow-list-tests.txt (tests), one file per line with how many such strings it may hold
 * and why; a file may only go down. Run by `pnpm lint` and .ci/run.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { LITERALS, readAllowList, sourceFiles, testFiles } from './server-sources.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SERVER = join(root, 'packages/server');
const PLACEHOLDER = /\$[1-9]\d*(?!\d)/;

/** Every literal with a `$n` placeholder, and every `.execute(<literal with ?>)`: one finding per SQL string. */
function findings(path) {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found = [];
  const seen = new Set();
  const add = (node, what) => {
    const statement = node.parent?.kind === ts.SyntaxKind.TemplateExpression ? node.parent : node;
    if (seen.has(statement)) return;
    seen.add(statement);
    const { line } = source.getLineAndCharacterOfPosition(statement.getStart());
    found.push(`${relative(root, path)}:${line + 1}: ${what}`);
  };
  /** `'$1'` as the replacement of `.replace(re, '$1')` is a regex group, not SQL. */
  const isReplacement = (node) =>
    ts.isCallExpression(node.parent) &&
    node.parent.arguments[1] === node &&
    ts.isPropertyAccessExpression(node.parent.expression) &&
    ['replace', 'replaceAll'].includes(node.parent.expression.name.text);
  const visit = (node) => {
    if (LITERALS.has(node.kind) && PLACEHOLDER.test(node.text) && !isReplacement(node)) {
      add(node, 'literal $n SQL placeholder');
    }
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'execute'
    ) {
      const [first] = node.arguments;
      const text =
        first && (ts.isStringLiteralLike(first) ? first.text : ts.isTemplateExpression(first) ? first.getText() : '');
      if (text?.includes('?')) add(first, 'MikroORM raw execute with ? placeholders');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Checks `files` against the allow-list `list` (relative to the root); answers the problems and the counts. */
function check(files, list) {
  const allowed = readAllowList(join(root, list));
  const problems = [];
  const counted = new Map();
  for (const path of files) {
    const found = findings(path);
    const file = relative(root, path);
    if (found.length) counted.set(file, found.length);
    const limit = allowed.get(file) ?? 0;
    if (found.length > limit) {
      problems.push(
        `${file}: ${found.length} literal SQL placeholder string(s), ${limit} allowed. Use sql\`…\` from db/query.ts:`,
        ...found.map((f) => `  ${f}`),
      );
    }
  }
  for (const [file, limit] of allowed) {
    const n = counted.get(file) ?? 0;
    if (n < limit)
      problems.push(`${file}: holds ${n} now; lower its count in ${list} to ${n}${n ? '' : ' (remove the line)'}`);
  }
  const total = [...counted.values()].reduce((a, b) => a + b, 0);
  return { problems, summary: `${total} allow-listed in ${counted.size} files` };
}

const sources = check(sourceFiles(join(SERVER, 'src')), '.ci/sql-allow-list.txt');
const tests = check(testFiles(SERVER), '.ci/sql-allow-list-tests.txt');
const problems = [...sources.problems, ...tests.problems];
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`SQL check: no new literal placeholders (sources: ${sources.summary}; tests: ${tests.summary})`);
