#!/usr/bin/env node
/**
 * One owner per table: every `INSERT INTO`, `UPDATE` and `DELETE FROM` on a table, in the SQL text
 * (string and template literals) of packages/server/src, must sit in the files of the table's
 * owner, given once in .ci/table-owners.txt; other code calls the owner's functions (or embeds the
 * statement fragments it exports). Migrations are exempt. A table missing from the map, an
 * INSERT/DELETE on an unknown table, and a foreign write not listed in .ci/table-writes-allow-list.txt
 * fail; an allow-listed write that is gone must be removed from the list, so it only shrinks.
 * A write whose table is a substitution (`DELETE FROM ${table}`, `UPDATE ${…}`, `INSERT INTO ${…}`)
 * cannot be checked, so outside db/ (the generic helpers and partition DDL) it fails too, unless
 * allow-listed with `*` for the table.
 * The server's tests (`*.test.ts` files of src, all of test/) are read too: there a table is written
 * by its owner's folder (the owner's own tests) or by the owner's test fixture,
 * `test/fixtures/<last segment of the owner folder>.ts` (`test/fixtures/event-log.ts` for events);
 * a table a test file creates itself is its own. What is not moved yet is in
 * .ci/table-writes-allow-list-tests.txt, which only shrinks too.
 * Run by `pnpm lint` and .ci/run. `--list` prints every write found.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { LITERALS, sourceFiles, testFiles } from './server-sources.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SERVER = join(root, 'packages/server');
const SRC = join(SERVER, 'src');
const OWNERS = join(root, '.ci/table-owners.txt');
const ALLOW_LIST = join(root, '.ci/table-writes-allow-list.txt');
const TEST_ALLOW_LIST = join(root, '.ci/table-writes-allow-list-tests.txt');
const EXEMPT = [join(SRC, 'db/migrations/')];
/** Where a write may name its table by a substitution: db/'s generic helpers (batched deletes, partitions). */
const DYNAMIC_OK = 'db/';

/** Lines of `<a> <b> <rest>` with comments (#) and blank lines dropped. */
function records(path, what) {
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((line, n) => ({ text: line.replace(/#.*/, '').trim(), n }))
    .filter((r) => r.text)
    .map(({ text, n }) => {
      const match = /^(\S+)\s+(\S+)(?:\s+(.+))?$/.exec(text);
      if (!match) throw new Error(`${path}:${n + 1}: expected ${what}`);
      return match.slice(1);
    });
}

/** table → the folder (relative to packages/server/src) whose files may write it. */
const owners = new Map(records(OWNERS, '"<table> <owner folder>"').map(([table, owner]) => [table, owner]));
for (const owner of new Set(owners.values())) {
  try {
    readdirSync(join(SRC, owner));
  } catch {
    throw new Error(`${OWNERS}: owner folder packages/server/src/${owner} does not exist`);
  }
}
/** "file table" pairs still allowed to write a table they do not own, with why. */
const allowList = (path) =>
  new Set(
    records(path, '"<file> <table> <reason>"').map(([file, table, reason]) => {
      if (!reason) throw new Error(`${path}: ${file} ${table}: say why it is still allowed`);
      return `${file} ${table}`;
    }),
  );
const sourceAllowed = allowList(ALLOW_LIST);
const testAllowed = allowList(TEST_ALLOW_LIST);
const allowed = new Set([...sourceAllowed, ...testAllowed]);

/** `UPDATE x` is a write only when x is a table: `DO UPDATE SET`, `FOR UPDATE OF` are not. */
const WRITE = /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(?:ONLY\s+)?"?([a-z_][a-z0-9_]*)/gi;
/** A template piece that ends where the table would be: the table is the substitution that follows. */
const DYNAMIC_WRITE = /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(?:ONLY\s+)?$/i;
const BEFORE_SUBSTITUTION = new Set([ts.SyntaxKind.TemplateHead, ts.SyntaxKind.TemplateMiddle]);

/** Every write in the SQL text of one file: { line, verb, table }. */
function writes(path) {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (LITERALS.has(node.kind)) {
      for (const m of node.text.matchAll(WRITE)) {
        const verb = m[1].toUpperCase().replace(/\s+/g, ' ');
        const table = m[2].toLowerCase();
        if (verb === 'UPDATE' && !owners.has(table)) continue;
        const { line } = source.getLineAndCharacterOfPosition(node.getStart());
        found.push({ line: line + 1, verb, table });
      }
      const dynamic = BEFORE_SUBSTITUTION.has(node.kind) ? DYNAMIC_WRITE.exec(node.text) : null;
      if (dynamic) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart());
        found.push({ line: line + 1, verb: dynamic[1].toUpperCase().replace(/\s+/g, ' '), table: '*' });
      }
    }
    // db/batched-delete.ts takes its table as raw('name'): `deleteInBatches(pool, raw('x'), …)` deletes from x.
    if (ts.isCallExpression(node) && node.expression.getText(source) === 'deleteInBatches') {
      const table = node.arguments[1];
      if (table && ts.isCallExpression(table) && table.expression.getText(source) === 'raw') {
        const [name] = table.arguments;
        const { line } = source.getLineAndCharacterOfPosition(node.getStart());
        const literal = name && ts.isStringLiteralLike(name) ? name.text.toLowerCase() : '*';
        found.push({ line: line + 1, verb: 'DELETE FROM', table: literal });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const list = process.argv.includes('--list');
const problems = [];
const used = new Set();
/** Whether `file` (relative to the root) is one of the owner's: its folder, or for tests its fixture. */
const ownedBy = (owner, file, isTest) =>
  relative(SRC, join(root, file)).startsWith(`${owner}/`) ||
  (isTest && file === relative(root, join(SERVER, 'test/fixtures', `${owner.split('/').at(-1)}.ts`)));

/** The tables a file creates itself (a test's scratch table): it may write them. */
const createdIn = (path) =>
  new Set(
    [...readFileSync(path, 'utf8').matchAll(/CREATE\s+(?:TEMP(?:ORARY)?\s+)?TABLE\s+"?([a-z_][a-z0-9_]*)/gi)].map((m) =>
      m[1].toLowerCase(),
    ),
  );

function checkFile(path, isTest) {
  const file = relative(root, path);
  const inSrc = relative(SRC, path);
  const scratch = isTest ? createdIn(path) : new Set();
  for (const w of writes(path)) {
    if (scratch.has(w.table)) continue;
    const owner = owners.get(w.table);
    const where = `${file}:${w.line}: ${w.verb} ${w.table}`;
    if (list) console.log(`${where} (owner ${owner ?? '?'})`);
    if (w.table === '*') {
      if (!isTest && inSrc.startsWith(DYNAMIC_OK)) continue;
      if (allowed.has(`${file} *`)) used.add(`${file} *`);
      else
        problems.push(
          `${where}: the table is a substitution, so its owner cannot be checked — name the table in the owner's function`,
        );
    } else if (!owner) {
      problems.push(`${where}: table not in .ci/table-owners.txt (add it with its owner)`);
    } else if (!ownedBy(owner, file, isTest)) {
      if (allowed.has(`${file} ${w.table}`)) used.add(`${file} ${w.table}`);
      else
        problems.push(
          `${where}: ${w.table} is written only by ${owner}/${isTest ? ` and test/fixtures/${owner.split('/').at(-1)}.ts` : ''} — call its functions instead`,
        );
    }
  }
}
for (const path of sourceFiles(SRC, EXEMPT)) checkFile(path, false);
for (const path of testFiles(SERVER)) checkFile(path, true);
// Every table the migrations create has its owner in the map.
for (const entry of readdirSync(join(SRC, 'db/migrations'))) {
  const text = readFileSync(join(SRC, 'db/migrations', entry), 'utf8');
  for (const m of text.matchAll(/CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?"?([a-z_][a-z0-9_]*)/gi)) {
    const table = m[1].toLowerCase();
    if (!owners.has(table))
      problems.push(`db/migrations/${entry}: table ${table} has no owner in .ci/table-owners.txt`);
  }
}
for (const entry of allowed) {
  if (!used.has(entry))
    problems.push(
      `${entry}: no longer writes the table; remove it from its allow-list (.ci/table-writes-allow-list*.txt)`,
    );
}
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(
  `Table owners: every write by its table's owner (${owners.size} tables; foreign writes allow-listed: ${sourceAllowed.size} in sources, ${testAllowed.size} in tests)`,
);
