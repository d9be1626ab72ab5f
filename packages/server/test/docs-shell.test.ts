import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { contract } from '@pigeon/contract';
import { plunkContract, resendContract } from '@pigeon/contract/compat';
import { flattenRoutes } from '@pigeon/contract/openapi';
import { describe, expect, it } from 'vitest';
import { markdownFiles, ROOT } from '../../sdk/test/markdown-docs.js';

// Every shell snippet (```sh) of README.md, docs/**/*.md and packages/sdk/README.md: each curl (and
// the docs' `api` curl helper) must name a method and path of the contract (the OpenAPI document's
// paths), or one of the few pages the server serves outside it; each `pigeon` command (also written
// `node packages/server/dist/cli.js`) must be one of the CLI's commands (cli.ts's USAGE).

/** Each command line of each ```sh block (continuations joined), with the file and line it starts on. */
function shellLines(file: string): { file: string; line: number; text: string }[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const out: { file: string; line: number; text: string }[] = [];
  let inShell = false;
  let pending: { line: number; text: string } | undefined;
  lines.forEach((raw, index) => {
    const fence = /^\s*```(\S*)/.exec(raw);
    if (fence) {
      inShell = !inShell && fence[1] === 'sh';
      return;
    }
    if (!inShell) return;
    const text = raw.trim();
    const joined = pending ? `${pending.text} ${text}` : text;
    const start = pending?.line ?? index + 1;
    if (text.endsWith('\\')) pending = { line: start, text: joined.slice(0, -1) };
    else {
      pending = undefined;
      out.push({ file, line: start, text: joined });
    }
  });
  return out;
}

/** Paths the server answers outside the contract (pages, probes, documents). */
const OUTSIDE_CONTRACT = [/^\/outbox/, /^\/health(\/ready)?$/, /^\/metrics$/, /^\/openapi(-3\.0)?\.json$/, /^\/docs\//];

// The compatibility layers' routes (Plunk's v1 contacts, Resend under /resend) are served too.
const routes = [contract, plunkContract, resendContract]
  .flatMap((c) => flattenRoutes(c))
  .map(({ route }) => ({
    method: route.method,
    pattern: new RegExp(`^${route.path.replace(/:[A-Za-z0-9_]+/g, '[^/]+')}$`),
    path: route.path,
  }));

const cliCommands = (() => {
  const cli = readFileSync(join(ROOT, 'packages/server/src/cli.ts'), 'utf8');
  const usage = cli.slice(cli.indexOf('const USAGE'), cli.indexOf('Configuration comes from'));
  return new Set([...usage.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]));
})();

interface Call {
  method: string;
  path: string;
}

/** The HTTP call a curl (or `api`) line makes. */
function callOf(text: string): Call | undefined {
  const url = /(?:https?:\/\/[^/\s"']+|\blocalhost:\d+)(\/[^\s"'?#]*)/.exec(text);
  if (!url?.[1]) return undefined;
  const explicit = /(?:^|\s)-X\s+([A-Z]+)/.exec(text)?.[1];
  const method = explicit ?? (/(?:^|\s)(-d|--data\S*)\s/.test(text) ? 'POST' : 'GET');
  return { method, path: url[1] };
}

describe('shell snippets in the docs', () => {
  const lines = markdownFiles().flatMap(shellLines);

  it('every curl names a method and path the API has', () => {
    const checked: string[] = [];
    const problems: string[] = [];
    for (const { file, line, text } of lines) {
      if (!/^(curl|api)\s/.test(text) && !/\|\s*curl\s/.test(text)) continue;
      const call = callOf(text);
      if (!call) continue;
      checked.push(`${call.method} ${call.path}`);
      const path = call.path.replace(/\/$/, '') || '/';
      if (OUTSIDE_CONTRACT.some((p) => p.test(call.path))) continue;
      if (routes.some((r) => r.method === call.method && r.pattern.test(path))) continue;
      const other = routes.filter((r) => r.pattern.test(path)).map((r) => `${r.method} ${r.path}`);
      problems.push(
        `${file}:${line}: ${call.method} ${call.path} is not in the API${other.length ? ` (it has ${other.join(', ')})` : ''}`,
      );
    }
    expect(checked.length).toBeGreaterThan(20);
    expect(problems).toEqual([]);
  });

  it('every pigeon command is one the CLI has', () => {
    expect(cliCommands.size).toBeGreaterThan(8);
    const problems: string[] = [];
    let checked = 0;
    for (const { file, line, text } of lines) {
      for (const m of text.matchAll(/(?:^|\s|\/)(?:pigeon|node packages\/server\/dist\/cli\.js)\s+([a-z][a-z-]*)/g)) {
        checked++;
        if (!cliCommands.has(m[1] ?? '')) problems.push(`${file}:${line}: \`pigeon ${m[1]}\` is not a CLI command`);
      }
    }
    expect(checked).toBeGreaterThan(3);
    expect(problems).toEqual([]);
  });
});
