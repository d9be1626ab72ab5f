import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { markdownFiles, ROOT, type Snippet, snippetsOf } from './markdown-docs.js';

// Every ```ts snippet of README.md, docs/**/*.md and packages/sdk/README.md is type-checked with
// --strict against the SDK's source, each as its own module (one program for all, so it takes seconds).
// Fragments may use the names PREAMBLE declares (one shared set); anything else they use they must
// declare or import themselves, as a reader's program would. A snippet of the SDK's own source (it
// starts with `// src/<file>.ts`) is checked as a file of packages/sdk/src.

/** What fragments may use without declaring it: the client, and what a request handler has. */
const PREAMBLE = `
import type { Campaign, Contact, Pigeon, Segment, Template } from '@pigeon/sdk';
declare global {
  /** A client made as the SDK README's "Install" shows. */
  const pigeon: Pigeon;
  /** A webhook request: its raw body and headers. */
  const rawBody: string;
  const req: { headers: Record<string, string> };
  const controller: AbortController;
  const projectId: string;
  const contactId: string;
  const password: string;
  const ids: string[];
  /** File content, base64-encoded (an attachment). */
  const base64: string;
  const file: File;
  const response: Response;
  const contact: Contact;
  const segment: Segment;
  const template: Template;
  const campaign: Campaign;
}
export {};
`;

const SDK = join(ROOT, 'packages/sdk/src/index.ts');
const CONTRACT = join(ROOT, 'packages/contract/src/index.ts');

describe('TypeScript snippets in the docs', () => {
  const snippets = markdownFiles().flatMap((file) => snippetsOf(file, 'ts'));

  it('are found', () => {
    expect(snippets.length).toBeGreaterThan(25);
  });

  it('type-check with --strict against the SDK', () => {
    const dir = join(ROOT, 'packages/sdk/.docs-snippets');
    const virtual = new Map<string, string>([[join(dir, 'preamble.d.ts'), PREAMBLE]]);
    const origin = new Map<string, Snippet>();
    snippets.forEach((snippet, index) => {
      // A snippet of the SDK's own source (first line `// src/….ts`) sits beside it, so its relative
      // imports resolve; under another name, so it never replaces the real file.
      const inSource = /^\/\/ src\/[\w-]+\.ts\b/.test(snippet.code);
      const name = join(inSource ? join(ROOT, 'packages/sdk/src') : dir, `docs-snippet-${index}.ts`);
      // `export {}` makes every snippet its own module, even one without an import.
      virtual.set(name, `${snippet.code}\nexport {};\n`);
      origin.set(name, snippet);
    });
    const options: ts.CompilerOptions = {
      strict: true,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules/@types')],
      skipLibCheck: true,
      noEmit: true,
      baseUrl: ROOT,
      paths: { '@pigeon/sdk': [SDK], '@pigeon/contract': [CONTRACT] },
    };
    const host = ts.createCompilerHost(options);
    const { fileExists, readFile, getSourceFile } = host;
    host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
    host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
    host.getSourceFile = (name, language, onError, create) => {
      const text = virtual.get(name);
      return text === undefined
        ? getSourceFile.call(host, name, language, onError, create)
        : ts.createSourceFile(name, text, language);
    };
    const program = ts.createProgram([...virtual.keys()], options, host);
    const problems: string[] = [];
    for (const [name, snippet] of origin) {
      const source = program.getSourceFile(name);
      if (!source) throw new Error(`${name} was not loaded`);
      for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
        const { line } = source.getLineAndCharacterOfPosition(d.start ?? 0);
        const message = ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
        problems.push(`${snippet.file}:${snippet.line + line}: TS${d.code} ${message}`);
      }
    }
    for (const d of program.getSemanticDiagnostics(program.getSourceFile(join(dir, 'preamble.d.ts')))) {
      problems.push(`the test's preamble: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    }
    expect(problems, `${relative(ROOT, dir)}: snippets that do not type-check`).toEqual([]);
  });
});
