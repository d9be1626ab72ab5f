/** What the checks (.ci/check-sql.mjs, check-table-owners.mjs, check-service-shape.mjs) read: server source files and their literals. */
import { readdirSync } from 'node:fs';
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
