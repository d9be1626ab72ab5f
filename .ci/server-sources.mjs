/** What the checks (.ci/check-sql.mjs, check-clock.mjs, check-table-owners.mjs, check-service-shape.mjs) read: server source files, their literals and allow-lists. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** Every `.ts` file under `dir` that `keep(name)` accepts, skipping paths that start with one of `exempt`. */
function* walk(dir, keep, exempt) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (exempt.some((e) => path.startsWith(e))) continue;
    if (entry.isDirectory()) yield* walk(path, keep, exempt);
    else if (entry.name.endsWith('.ts') && keep(entry.name)) yield path;
  }
}

const isTest = (name) => name.endsWith('.test.ts');

/** Every non-test `.ts` file under `dir`, skipping paths that start with one of `exempt`. */
export function* sourceFiles(dir, exempt = []) {
  yield* walk(dir, (name) => !isTest(name), exempt);
}

/**
 * The server's test code: every `*.test.ts` under `server/src` and every `.ts` file under
 * `server/test` (tests, helpers and fixtures), given the server package's folder.
 */
export function* testFiles(server) {
  yield* walk(join(server, 'src'), isTest, []);
  yield* walk(join(server, 'test'), () => true, []);
}

/** The syntax kinds whose text is SQL when it is SQL: strings and the pieces of template literals. */
export const LITERALS = new Set([
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateHead,
  ts.SyntaxKind.TemplateMiddle,
  ts.SyntaxKind.TemplateTail,
]);

/** An allow-list of `<file> <count> <reason>` lines (`#` comments): each file with the count it may hold. */
export function readAllowList(path) {
  const allowed = new Map();
  for (const [n, line] of readFileSync(path, 'utf8').split('\n').entries()) {
    const text = line.replace(/#.*/, '').trim();
    if (!text) continue;
    const match = /^(\S+)\s+(\d+)\s+(.+)$/.exec(text);
    if (!match) throw new Error(`${path}:${n + 1}: expected "<file> <count> <reason>"`);
    allowed.set(match[1], Number(match[2]));
  }
  return allowed;
}

/**
 * Checks each of `files` against an allow-list that only shrinks: `findings(path)` lists what a
 * file holds, `list` (relative to `root`) says how many each file may still hold; a file over its
 * count, or under it (the line must come down), is a problem. `over(file, n, limit)` words the first.
 */
export function checkAllowListed({ root, files, findings, list, over }) {
  const allowed = readAllowList(join(root, list));
  const problems = [];
  const counted = new Map();
  for (const path of files) {
    const found = findings(path);
    const file = relative(root, path);
    if (found.length) counted.set(file, found.length);
    const limit = allowed.get(file) ?? 0;
    if (found.length > limit) problems.push(over(file, found.length, limit), ...found.map((f) => `  ${f}`));
  }
  for (const [file, limit] of allowed) {
    const n = counted.get(file) ?? 0;
    if (n < limit)
      problems.push(`${file}: holds ${n} now; lower its count in ${list} to ${n}${n ? '' : ' (remove the line)'}`);
  }
  const total = [...counted.values()].reduce((a, b) => a + b, 0);
  return { problems, summary: `${total} allow-listed in ${counted.size} files` };
}
