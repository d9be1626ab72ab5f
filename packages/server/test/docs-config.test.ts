import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// docs/configuration.md's tables are generated from EnvSchema and docs/configuration.json by
// scripts/config-reference.mjs (`pnpm docs:config`); these fail when the page or the meanings drift.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/config-reference.mjs');
const MEANINGS = join(ROOT, 'docs/configuration.json');

const run = async (...args: string[]) => {
  try {
    await promisify(execFile)(process.execPath, [SCRIPT, ...args], { cwd: ROOT });
    return { code: 0, stderr: '' };
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    return { code: failed.code ?? -1, stderr: failed.stderr ?? '' };
  }
};

const scratch = mkdtempSync(join(tmpdir(), 'pigeon-docs-config-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Meanings {
  sections: { title: string; variables: Record<string, { unset?: string; note?: string; meaning: string }> }[];
}

describe('docs/configuration.md', () => {
  it('is exactly what `pnpm docs:config` generates from the schema and docs/configuration.json', async () => {
    const { code, stderr } = await run('--check');
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('cannot be generated when a schema variable has no meaning or a meaning names no schema variable', async () => {
    const meanings = JSON.parse(readFileSync(MEANINGS, 'utf8')) as Meanings;
    const first = meanings.sections[0];
    if (!first) throw new Error('no sections');
    delete first.variables.PORT;
    first.variables.NOT_A_PIGEON_SETTING = { unset: '*(unset)*', meaning: 'nothing' };
    const file = join(scratch, 'meanings.json');
    writeFileSync(file, JSON.stringify(meanings));
    const { code, stderr } = await run('--check', '--meanings', file);
    expect(code).toBe(1);
    expect(stderr).toContain('PORT: is in EnvSchema but has no meaning');
    expect(stderr).toContain('NOT_A_PIGEON_SETTING: has a meaning in the meanings file but is not in EnvSchema');
  });

  it('fails the check when the page was edited by hand', async () => {
    const doc = join(scratch, 'configuration.md');
    const edited = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8').replace('| `3000` |', '| `8080` |');
    writeFileSync(doc, edited);
    const { code, stderr } = await run('--check', '--doc', doc);
    expect(code).toBe(1);
    expect(stderr).toContain('pnpm docs:config');
  });
});
