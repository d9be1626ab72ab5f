import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The markdown the docs tests read: README.md, packages/sdk/README.md and docs/**. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
    );
  return ['README.md', 'packages/sdk/README.md', ...walk('docs')];
}

export interface Snippet {
  file: string;
  /** 1-based line of the snippet's first code line. */
  line: number;
  code: string;
}

export function snippetsOf(file: string, language: string): Snippet[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const snippets: Snippet[] = [];
  let open: { line: number; indent: string; code: string[] } | undefined;
  lines.forEach((text, index) => {
    const fence = /^(\s*)```(\S*)/.exec(text);
    if (open) {
      if (fence && fence[1] === open.indent && fence[2] === '') {
        snippets.push({ file, line: open.line, code: open.code.join('\n') });
        open = undefined;
      } else open.code.push(text.startsWith(open.indent) ? text.slice(open.indent.length) : text);
    } else if (fence && fence[2] === language) open = { line: index + 2, indent: fence[1] ?? '', code: [] };
  });
  return snippets;
}
