#!/usr/bin/env node
/**
 * One service shape, thin handlers (CONTRIBUTING.md "A service"), in packages/server/src/modules:
 * (a) no file is named for a layer instead of what it does: `repository.ts`, `queries.ts`,
 *     `index.ts`, `dao.ts` (a module's public functions live in `service.ts`);
 * (b) an exported async function of a `service.ts` takes its one handle first, named `db`
 *     (a Queryable), `pool` (a pg.Pool: it opens its own transactions) or `deps` (AppDeps or part
 *     of it); no exported function of a module takes two handles; a `db` is never typed `pg.Pool`
 *     and a `pool` is never a Queryable;
 * (c) a router (`router.ts`, `*-router.ts`, `*-routes.ts`) holds no SQL (`sql\`…\``, `queryRows`,
 *     `runStatement`, `preparedRows`, `.query(`) and each of its ts-rest handlers awaits at most one
 *     call: parse, call one service function, map the result (signing the session cookie onto the
 *     response, `startSession`, is mapping: it may follow the call).
 * Run by `pnpm lint` and .ci/run.
 */
import { readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { sourceFiles } from './server-sources.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const MODULES = join(root, 'packages/server/src/modules');
const LAYER_NAMES = new Set(['repository.ts', 'queries.ts', 'index.ts', 'dao.ts']);
const HANDLE_NAMES = new Set(['db', 'deps', 'pool']);
/** A parameter is a handle by its name, or by a type that is one (a second handle renamed still counts). */
const HANDLE_TYPE = /^(?:Queryable|pg\.Pool|pg\.PoolClient|AppDeps|Pick<AppDeps\b.*)$/s;
const SQL_CALLS = new Set(['queryRows', 'runStatement', 'preparedRows']);
/** Awaited calls that map a result onto the response rather than do the work. */
const MAPPING_CALLS = new Set(['startSession']);

const isRouter = (file) => /(^router|-router|-routes)\.ts$/.test(basename(file));
const exported = (node) => node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

/** Every exported function of a file: `export (async) function f(…)` and `export const f = (async) (…) =>`. */
function* exportedFunctions(source) {
  for (const statement of source.statements) {
    if (!exported(statement)) continue;
    if (ts.isFunctionDeclaration(statement) && statement.name && statement.body) {
      yield { name: statement.name.text, fn: statement };
    }
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) {
        const init = d.initializer;
        if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)))
          yield { name: d.name.getText(), fn: init };
      }
    }
  }
}

const isAsync = (fn) =>
  fn.modifiers?.some((m) => m.kind === ts.SyntaxKind.AsyncKeyword) || /^Promise</.test(fn.type?.getText() ?? '');

function checkSignatures(file, source, problems) {
  const where = (node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  for (const { name, fn } of exportedFunctions(source)) {
    const params = fn.parameters.map((p) => ({
      name: ts.isIdentifier(p.name) ? p.name.text : '',
      type: p.type?.getText().replace(/\s+/g, ' ') ?? '',
    }));
    const handles = params.filter((p) => HANDLE_NAMES.has(p.name) || HANDLE_TYPE.test(p.type));
    if (handles.length > 1) {
      problems.push(
        `${where(fn)}: ${name} takes ${handles.length} handles (${handles.map((h) => h.name).join(', ')}); pass one (deps carries more)`,
      );
    }
    for (const p of params) {
      if (p.name === 'db' && p.type === 'pg.Pool') {
        problems.push(`${where(fn)}: ${name}: a db is a Queryable; name it pool if it opens its own transactions`);
      }
      if (p.name === 'pool' && p.type === 'Queryable') problems.push(`${where(fn)}: ${name}: a Queryable is named db`);
    }
    if (basename(file) === 'service.ts' && isAsync(fn) && !HANDLE_NAMES.has(params[0]?.name)) {
      problems.push(
        `${where(fn)}: ${name}: an async service function takes its handle first (db, pool or deps), not ${params[0]?.name || 'nothing'}`,
      );
    }
  }
}

/** The ts-rest handlers of a router file: the function-valued properties of object literals passed to `….router(…)`. */
function* handlers(source) {
  function* visit(node) {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'router'
    ) {
      for (const arg of node.arguments) if (ts.isObjectLiteralExpression(arg)) yield* fromObject(arg);
    }
    for (const child of node.getChildren(source)) yield* visit(child);
  }
  /** `{ track }`: the function a shorthand property names, when the file defines it as a const. */
  const local = new Map();
  const collect = (node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer)
      local.set(node.name.text, node.initializer);
    ts.forEachChild(node, collect);
  };
  collect(source);
  function* fromObject(object) {
    for (const prop of object.properties) {
      const name = prop.name?.getText() ?? '?';
      const value = ts.isPropertyAssignment(prop)
        ? ts.isIdentifier(prop.initializer)
          ? local.get(prop.initializer.text)
          : prop.initializer
        : ts.isMethodDeclaration(prop)
          ? prop
          : ts.isShorthandPropertyAssignment(prop)
            ? local.get(name)
            : undefined;
      if (!value) continue;
      if (ts.isArrowFunction(value) || ts.isFunctionExpression(value) || ts.isMethodDeclaration(value)) {
        yield { name, fn: value };
      } else if (ts.isObjectLiteralExpression(value)) {
        // `{ middleware: […], handler: async (…) => … }`, or a nested router.
        const handler = value.properties.find((p) => p.name?.getText() === 'handler');
        if (handler && ts.isPropertyAssignment(handler)) yield { name, fn: handler.initializer };
        else yield* fromObject(value);
      }
    }
  }
  yield* visit(source);
}

const calleeName = (node) => {
  if (!ts.isCallExpression(node)) return '';
  const callee = node.expression;
  return ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
};

/** Awaited calls in a handler's own body (not in functions it defines). */
function awaitedCalls(fn) {
  let count = 0;
  const visit = (node) => {
    if (node !== fn && (ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isFunctionDeclaration(node))) {
      return;
    }
    if (ts.isAwaitExpression(node) && !MAPPING_CALLS.has(calleeName(node.expression))) count++;
    ts.forEachChild(node, visit);
  };
  visit(fn);
  return count;
}

function checkRouter(file, source, problems) {
  const where = (node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node) => {
    if (ts.isTaggedTemplateExpression(node) && node.tag.getText() === 'sql') {
      problems.push(`${where(node)}: SQL in a router; move it into the module's service`);
    }
    if (ts.isCallExpression(node)) {
      const name = calleeName(node);
      if (SQL_CALLS.has(name) || (name === 'query' && ts.isPropertyAccessExpression(node.expression))) {
        problems.push(`${where(node)}: ${name}() in a router; move it into the module's service`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  const seen = new Set();
  for (const { name, fn } of handlers(source)) {
    if (seen.has(fn)) continue;
    seen.add(fn);
    const awaits = awaitedCalls(fn);
    if (awaits > 1) {
      problems.push(
        `${where(fn)}: handler ${name} awaits ${awaits} calls; call one service function and map its result`,
      );
    }
  }
}

const problems = [];
let routers = 0;
for (const path of sourceFiles(MODULES)) {
  const file = relative(root, path);
  if (LAYER_NAMES.has(basename(path))) {
    problems.push(`${file}: name a module file for what it does; a module's public functions live in service.ts`);
  }
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  checkSignatures(file, source, problems);
  if (isRouter(path)) {
    routers++;
    checkRouter(file, source, problems);
  }
}

if (problems.length) {
  console.error(`Service shape (CONTRIBUTING.md "A service"):\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log(`service shape: ok (${routers} routers)`);
