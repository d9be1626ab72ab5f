// Writes src/types.ts: the SDK's public wire types as plain TypeScript, resolved from the contract.
//
// src/wire-types.ts derives every type from the contract (`z.infer<typeof wire.Contact>`, a route's
// `SuccessBody`, …). Handed to a customer as it is, their tsc would load zod's and ts-rest's declarations
// and instantiate those deep inferred types on every compile (seconds and hundreds of MB for a small
// program: bench/sdk-typecheck.mjs). This script asks the compiler for the resolved type of each alias
// and writes it out, so the declarations the SDK ships name only plain object types and unions.
// Exported interfaces and generic aliases are copied as written (they refer to the resolved ones); named
// types of the contract that the resolved types refer to (`ContactSchema`, `ConditionTree`, …) are
// resolved the same way. Run by `pnpm build` (and `pnpm generate`); test/types-generated.test.ts fails
// when src/types.ts is out of date.
//   node scripts/generate-types.mjs [--check]
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const sdk = fileURLToPath(new URL('..', import.meta.url));
const input = `${sdk}src/wire-types.ts`;
const output = `${sdk}src/types.ts`;
const contractIndex = fileURLToPath(new URL('../../contract/src/index.ts', import.meta.url));

const config = ts.getParsedCommandLineOfConfigFile(
  `${sdk}tsconfig.json`,
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
);
const program = ts.createProgram([input], { ...config.options, noEmit: true });
const checker = program.getTypeChecker();
const source = program.getSourceFile(input);
const flags =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.InTypeAlias |
  ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType |
  ts.TypeFormatFlags.UseStructuralFallback;

const jsDoc = (node) => {
  const docs = ts.getJSDocCommentsAndTags(node).filter((d) => ts.isJSDoc(d));
  return docs.map((d) => `${d.getText()}\n`).join('');
};

const formatHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => sdk, getNewLine: () => '\n' };

const out = [];
for (const statement of source.statements) {
  const exported = statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  if (!exported) continue;
  if (ts.isTypeAliasDeclaration(statement) && !statement.typeParameters) {
    out.push(`${jsDoc(statement)}${declaration(statement.name.text, checker.getTypeAtLocation(statement.name))}`);
  } else if (ts.isTypeAliasDeclaration(statement) || ts.isInterfaceDeclaration(statement)) {
    out.push(`${jsDoc(statement)}${statement.getText().replace(/^\/\*\*[\s\S]*?\*\/\s*/, '')}`);
  } else {
    throw new Error(`src/wire-types.ts may hold only types: ${statement.getText().slice(0, 80)}`);
  }
}

// Named types of the contract that the resolved ones refer to: resolve them until nothing is missing.
const contract = checker.getSymbolAtLocation(program.getSourceFile(contractIndex));
const contractExports = new Map(checker.getExportsOfModule(contract).map((s) => [s.name, s]));
const local = [];
for (;;) {
  const text = render();
  const check = ts.createProgram({
    rootNames: ['types.ts'],
    options: { strict: true, noEmit: true, types: [], lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'] },
    host: hostWith('types.ts', text),
  });
  const missing = new Set(
    ts
      .getPreEmitDiagnostics(check)
      .filter((d) => d.code === 2304)
      .map((d) => /'([^']+)'/.exec(ts.flattenDiagnosticMessageText(d.messageText, ' '))[1]),
  );
  const errors = ts.getPreEmitDiagnostics(check).filter((d) => d.code !== 2304);
  if (missing.size === 0) {
    if (errors.length) throw new Error(ts.formatDiagnostics(errors, formatHost));
    finish(text);
    break;
  }
  for (const name of missing) {
    let symbol = contractExports.get(name);
    if (!symbol) throw new Error(`${name} is referred to by a resolved type but not exported by the contract`);
    if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    local.push(
      `/** The contract's \`${name}\`. */\n${declaration(name, checker.getDeclaredTypeOfSymbol(symbol), true)}`,
    );
  }
}

/** `export type name = …`, or `export interface name { … }` for a named object type (an interface of the contract). */
function declaration(name, type, expand = false) {
  const shown = checker.typeToString(type, undefined, flags);
  if (!(expand || shown === name) || !(type.flags & ts.TypeFlags.Object)) return `export type ${name} = ${shown};`;
  const members = checker.getPropertiesOfType(type).map((p) => {
    const optional = p.flags & ts.SymbolFlags.Optional ? '?' : '';
    const key = /^[A-Za-z_$][\w$]*$/.test(p.name) ? p.name : JSON.stringify(p.name);
    return `  ${key}${optional}: ${checker.typeToString(checker.getTypeOfSymbol(p), undefined, flags)};`;
  });
  return `export interface ${name} {\n${members.join('\n')}\n}`;
}

function render() {
  return [
    '// Generated by scripts/generate-types.mjs from src/wire-types.ts (the contract): do not edit.',
    '// Plain types, so that a program using the SDK type-checks without zod or ts-rest (see README).',
    '',
    ...byName([...out, ...local]),
    '',
  ].join('\n');
}

/**
 * The compiler spells every type out; where a declaration's text holds the whole text of another
 * alias (an object type, or a union of string literals), use that alias's name instead: `ContactPage`
 * reads `{ data: Contact[]; … }`. The same text is the same type, so nothing changes but the reading.
 */
function byName(declarations) {
  const alias = /^((?:\/\*\*[\s\S]*?\*\/\n)?export type (\w+) = )([\s\S]*);$/;
  const parsed = declarations.map((text, index) => {
    const m = alias.exec(text);
    return m ? { index, head: m[1], name: m[2], body: m[3] } : { index, text };
  });
  const names = parsed
    .filter((d) => d.body && d.body.length >= 24 && (d.body.startsWith('{') || /^'[^']*'( \| '[^']*')+$/.test(d.body)))
    .sort((a, b) => b.body.length - a.body.length);
  return parsed.map((d) => {
    if (!d.body) return d.text;
    let body = d.body;
    for (const n of names) {
      const smaller = n.body.length < d.body.length || (n.body.length === d.body.length && n.index < d.index);
      if (n.name !== d.name && smaller) body = body.split(n.body).join(n.name);
    }
    return `${d.head}${body};`;
  });
}

function hostWith(name, text) {
  const host = ts.createCompilerHost({});
  const getSourceFile = host.getSourceFile;
  host.getSourceFile = (file, lang) =>
    file === name ? ts.createSourceFile(file, text, lang, true) : getSourceFile.call(host, file, lang);
  host.fileExists = (
    (exists) => (file) =>
      file === name || exists(file)
  )(host.fileExists);
  return host;
}

function finish(unformatted) {
  // Formatted as the repository formats code, so the file reads well and passes `pnpm lint`.
  const biome = fileURLToPath(new URL('../../../node_modules/.bin/biome', import.meta.url));
  const text = execFileSync(biome, ['format', `--stdin-file-path=${output}`], { input: unformatted, encoding: 'utf8' });
  if (process.argv.includes('--check')) {
    if (readFileSync(output, 'utf8') !== text) {
      console.error('src/types.ts is out of date: run node scripts/generate-types.mjs');
      process.exit(1);
    }
  } else writeFileSync(output, text);
}
