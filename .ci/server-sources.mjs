/** What the checks (.ci/check-sql.mjs, check-clock.mjs, check-table-owners.mjs, check-service-shape.mjs) read: server source files, their literals and allow-lists. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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
