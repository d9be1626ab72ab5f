import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { contract, namedSchemas } from './index.js';
import { buildOpenApiDocument, portablePattern, toOpenApi30 } from './openapi.js';

/**
 * Every `pattern` of both OpenAPI documents compiles in engines other than JavaScript's: Perl (with
 * warnings fatal, so an escape Perl does not know is an error, not a literal) and PCRE2
 * (`pcre2grep`, Debian's pcre2-utils; `.ci/run` installs it). Go, Java and Python read this subset.
 */
const v31 = buildOpenApiDocument(contract, namedSchemas, { title: 'Pigeon', version: 'test' });
const v30 = toOpenApi30(v31);

function patternsOf(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) patternsOf(item, out);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') out.add(value);
      else patternsOf(value, out);
    }
  }
  return out;
}

const PERL_COMPILE = String.raw`
use strict; use warnings FATAL => 'all';
while (my $p = <STDIN>) { chomp $p; my $re = eval { qr/$p/ }; print $re ? "ok\n" : "error: $p: $@\n"; }`;

/** Perl's verdict on each pattern: `ok` or the error. */
const perlCompiles = (patterns: string[]) =>
  execFileSync('perl', ['-e', PERL_COMPILE], { input: `${patterns.join('\n')}\n`, encoding: 'utf8' })
    .trim()
    .split('\n');

/** pcre2grep exits 0 or 1 (match or not) for a pattern it compiles, 2 for one it refuses. */
const pcre2Compiles = (pattern: string) => spawnSync('pcre2grep', ['-u', '-e', pattern], { input: 'x\n' }).status;

/** Whether Perl finds the pattern in the text (UTF-8 both). */
const perlMatches = (pattern: string, text: string) =>
  execFileSync('perl', ['-CSA', '-e', 'my ($p, $t) = @ARGV; print(($t =~ /$p/) ? "yes" : "no")', pattern, text], {
    encoding: 'utf8',
  });

/** Both programs come from Debian (perl and pcre2-utils); `scripts/test-deps.sh` installs them. */
const hasTools = spawnSync('sh', ['-c', 'command -v perl && command -v pcre2grep']).status === 0;
if (!hasTools)
  console.warn('OpenAPI pattern test skipped: no pcre2grep (Debian package pcre2-utils) or perl on this machine.');

describe.skipIf(!hasTools)('OpenAPI patterns outside JavaScript', () => {
  const patterns = [...patternsOf(v31), ...patternsOf(v30)].filter((p, i, all) => all.indexOf(p) === i);

  it('finds the patterns, none with a JavaScript-only \\u escape', () => {
    expect(patterns.length).toBeGreaterThan(4);
    expect(patterns.filter((p) => /\\u[0-9A-Fa-f]{4}/.test(p))).toEqual([]);
  });

  it('compiles every pattern with Perl and with PCRE2', () => {
    expect(perlCompiles(patterns)).toEqual(patterns.map(() => 'ok'));
    expect(patterns.map((p) => [p, pcre2Compiles(p)]).filter(([, status]) => status !== 0 && status !== 1)).toEqual([]);
  });

  it('refuses the JavaScript escapes the documents used to carry, and keeps their meaning', () => {
    const before = '^[^\\u0000-\\u001F\\u007F-\\u009F]+$';
    expect(pcre2Compiles(before)).toBe(2);
    const after = portablePattern(before);
    expect(after).toBe('^[^\\x00-\\x1F\\x7F-\\x9F]+$');
    expect(pcre2Compiles(after)).not.toBe(2);
    expect(perlMatches(after, 'signed-up')).toBe('yes');
    expect(perlMatches(after, 'bad\u0007name')).toBe('no');
    expect(perlMatches(after, 'caf\u00e9 \u2603')).toBe('yes');
  });
});
