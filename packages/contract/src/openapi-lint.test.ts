import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { contract, namedSchemas } from './index.js';
import { buildOpenApiDocument, toOpenApi30 } from './openapi.js';

// Redocly CLI (recommended rules) and Spectral (spectral:oas) over both documents, offline, as the
// server serves them (a server URL, the deployment's PUBLIC_URL). Zero errors; the only warnings
// allowed are the ones listed in README.md, OpenAPI: forced by the spec's paths, or by the URL.
const run = promisify(execFile);
const bin = (name: string) => fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'pigeon-openapi-lint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const document = buildOpenApiDocument(contract, namedSchemas, {
  title: 'Pigeon API',
  version: 'test',
  description: 'Pigeon, a self-hostable email platform.',
  serverUrl: 'http://localhost:3000',
});
const files = {
  '3.1': join(dir, 'openapi.json'),
  '3.0': join(dir, 'openapi-3.0.json'),
};
writeFileSync(files['3.1'], JSON.stringify(document));
writeFileSync(files['3.0'], JSON.stringify(toOpenApi30(document)));
writeFileSync(join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n');

/** Warnings that the spec's own paths force, and the localhost server URL of a development setup. */
const ACCEPTED_WARNINGS = [
  'no-ambiguous-paths: /events/contact/{contactId} ~ /events/{eventName}/usage',
  // Contact ids are UUIDs, never `fields`; /contacts/fields/* is registered first.
  'no-ambiguous-paths: /contacts/fields/{field} ~ /contacts/{id}/topics',
  'no-ambiguous-paths: /domains/{id}/dmarc ~ /domains/project/{projectId}',
  'no-ambiguous-paths: /domains/project/{projectId} ~ /domains/{id}/verify',
  'no-ambiguous-paths: /domains/project/{projectId} ~ /domains/{id}/check',
  'no-ambiguous-paths: /domains/project/{projectId} ~ /domains/{id}/warmup',
  'no-server-example.com: #/servers/0/url',
];

interface RedoclyProblem {
  ruleId: string;
  severity: string;
  message: string;
  location: Array<{ pointer: string }>;
}

const describeProblem = (p: RedoclyProblem) => {
  const paths = [...p.message.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  return p.ruleId === 'no-ambiguous-paths'
    ? `${p.ruleId}: ${paths.join(' ~ ')}`
    : `${p.ruleId}: ${p.location[0]?.pointer}`;
};

describe.each(Object.entries(files))('OpenAPI %s document', (version, file) => {
  it('passes Redocly lint with no errors and only the accepted warnings', async () => {
    const result = await run(bin('redocly'), ['lint', file, '--format=json'], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((e: { stdout: string }) => e);
    const report = JSON.parse(result.stdout) as { totals: { errors: number }; problems: RedoclyProblem[] };
    expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
    expect(report.problems.map(describeProblem).sort()).toEqual([...ACCEPTED_WARNINGS].sort());
  }, 60_000);

  it("passes Spectral's spectral:oas with no errors or warnings", async () => {
    const output = join(dir, `spectral-${version}.json`);
    await run(bin('spectral'), ['lint', file, '-r', join(dir, '.spectral.yaml'), '-f', 'json', '-o', output], {
      cwd: dir,
    }).catch(() => undefined); // exits non-zero on errors: the report says which
    const problems = JSON.parse(readFileSync(output, 'utf8')) as Array<{
      code: string;
      severity: number;
      path: string[];
    }>;
    expect(problems.map((p) => `${p.code} (${p.severity}) at ${p.path.join('.')}`)).toEqual([]);
  }, 60_000);
});
