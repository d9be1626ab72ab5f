import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const script = fileURLToPath(new URL('../scripts/generate-types.mjs', import.meta.url));

describe('src/types.ts (generated from the contract)', () => {
  it('is what scripts/generate-types.mjs writes from the contract today', async () => {
    // Exits 1 with "out of date" when the contract (or src/wire-types.ts) changed without a regeneration.
    const result = await run(process.execPath, [script, '--check']).catch((e: { code: number; stderr: string }) => e);
    expect('stderr' in result ? result.stderr : '').toBe('');
  }, 180_000);

  it('declares plain types only: no zod, no ts-rest, no import of the contract', () => {
    const text = readFileSync(new URL('../src/types.ts', import.meta.url), 'utf8');
    expect(text).not.toMatch(/^import\b/m);
    expect(text).not.toMatch(/\bz\.|Zod|AppRoute|ClientInfer/);
    expect(text).toMatch(/^export type Contact = \{/m);
    expect(text).toMatch(/^export interface ConditionTree \{/m);
  });
});
