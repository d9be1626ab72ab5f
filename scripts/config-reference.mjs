#!/usr/bin/env node
// Renders the configuration reference (docs/configuration.md, between its `config` markers) from the
// environment schema itself (`EnvSchema` in packages/server/src/config/schema.ts: every variable and
// its default) and docs/configuration.json (what each variable means, grouped into sections), so the
// table cannot drift from the code. It fails when a schema variable has no meaning, when a meaning
// names a variable the schema does not have, or when a default is written by hand where the schema
// has one (or is missing where it has none).
//
//   node scripts/config-reference.mjs           rewrite docs/configuration.md
//   node scripts/config-reference.mjs --check   exit 1 when docs/configuration.md is not what it would write
//   --meanings <file>, --doc <file>             other inputs (the test uses them)
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCHEMA = join(ROOT, 'packages/server/src/config/schema.ts');
export const START = '<!-- config:start -->';
export const END = '<!-- config:end -->';

/**
 * The schema module, transpiled from its TypeScript source (type-only imports vanish) into a file
 * beside the server's node_modules so `zod` and `ipaddr.js` resolve as the server resolves them.
 */
async function loadEnvSchema() {
  const source = readFileSync(SCHEMA, 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    fileName: SCHEMA,
  });
  const dir = join(ROOT, 'packages/server/node_modules/.cache/config-reference');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `schema-${process.pid}-${Date.now()}.mjs`);
  writeFileSync(file, outputText);
  try {
    const { EnvSchema } = await import(pathToFileURL(file).href);
    return EnvSchema;
  } finally {
    rmSync(file, { force: true });
  }
}

/** The schema's default of one variable (looking through transforms), or `undefined` when it has none. */
function defaultOf(field) {
  let type = field;
  for (;;) {
    const def = type._def;
    if (def.typeName === 'ZodDefault') return { value: def.defaultValue() };
    if (def.typeName === 'ZodEffects') type = def.schema;
    else if (def.typeName === 'ZodPipeline') type = def.in;
    else return undefined;
  }
}

const formatDefault = (value) => (value === '' ? '*(empty)*' : `\`${String(value)}\``);
const cell = (text) => text.replaceAll('\n', ' ');

/** The Markdown between the markers, or a list of problems. */
export function renderTable(envSchema, meanings) {
  const shape = envSchema.shape;
  const problems = [];
  const documented = new Set();
  const parts = [];
  for (const section of meanings.sections) {
    const rows = ['| Variable | Default | Meaning |', '|---|---|---|'];
    for (const [key, entry] of Object.entries(section.variables)) {
      const names = key.split(',').map((name) => name.trim());
      const defaults = [];
      for (const name of names) {
        if (!(name in shape)) {
          problems.push(`${name}: has a meaning in the meanings file but is not in EnvSchema`);
          continue;
        }
        if (documented.has(name)) problems.push(`${name}: has two meanings`);
        documented.add(name);
        defaults.push(defaultOf(shape[name]));
      }
      if (!entry.meaning?.trim()) problems.push(`${key}: the meaning is empty`);
      const schemaDefault = defaults.find((d) => d !== undefined);
      if (defaults.length > 1 && defaults.some((d) => JSON.stringify(d) !== JSON.stringify(defaults[0]))) {
        problems.push(`${key}: share one row but not one default`);
      }
      let shown;
      if (schemaDefault) {
        if (entry.unset) problems.push(`${key}: has a schema default, so "unset" must not describe one`);
        shown = formatDefault(schemaDefault.value) + (entry.note ? ` ${entry.note}` : '');
      } else {
        if (!entry.unset) problems.push(`${key}: has no schema default, so "unset" must say what leaving it out does`);
        if (entry.note) problems.push(`${key}: "note" annotates a schema default, and there is none`);
        shown = entry.unset ?? '';
      }
      rows.push(`| ${names.map((name) => `\`${name}\``).join(', ')} | ${cell(shown)} | ${cell(entry.meaning ?? '')} |`);
    }
    parts.push(`### ${section.title}\n\n${rows.join('\n')}`);
  }
  for (const name of Object.keys(shape)) {
    if (!documented.has(name)) problems.push(`${name}: is in EnvSchema but has no meaning in the meanings file`);
  }
  return { problems, table: parts.join('\n\n') };
}

/** The document with the generated part between the markers replaced. */
export function withTable(doc, table) {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`the document needs the markers ${START} and ${END}`);
  return `${doc.slice(0, start + START.length)}\n${table}\n${doc.slice(end)}`;
}

async function main() {
  const { values } = parseArgs({
    options: {
      check: { type: 'boolean', default: false },
      meanings: { type: 'string', default: join(ROOT, 'docs/configuration.json') },
      doc: { type: 'string', default: join(ROOT, 'docs/configuration.md') },
    },
  });
  const meanings = JSON.parse(readFileSync(values.meanings, 'utf8'));
  const { problems, table } = renderTable(await loadEnvSchema(), meanings);
  if (problems.length > 0) {
    console.error(
      `${values.meanings} does not match EnvSchema (${SCHEMA}):\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
    process.exit(1);
  }
  const current = readFileSync(values.doc, 'utf8');
  const next = withTable(current, table);
  if (values.check) {
    if (next !== current) {
      console.error(`${values.doc} is not what the schema and ${values.meanings} give: run \`pnpm docs:config\``);
      process.exit(1);
    }
    return;
  }
  mkdirSync(dirname(values.doc), { recursive: true });
  if (next !== current) writeFileSync(values.doc, next);
  console.log(`${values.doc}: ${next === current ? 'up to date' : 'written'}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
