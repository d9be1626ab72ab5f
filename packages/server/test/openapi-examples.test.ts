import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from './accounts.js';
import { startTestPigeon, type TestPigeon } from './helpers.js';

/**
 * Every request body example of `/openapi.json` works as sent: posted to a real Pigeon (the local
 * outbox, where `example.com` is verified as soon as the `POST /domains` example adds it), each
 * answers 2xx, or the status and reason written down below. Operations run in the document's order
 * in one fresh project, with its secret key, or with the owner's session (and `X-Project-Id`) where
 * the route takes only that; path parameters get an id that names nothing (404, said once below).
 */
type Json = Record<string, unknown>;

/** Operations whose example cannot succeed as sent, with the status they answer and why. */
const EXPECTED: Record<string, { status: number; reason: string }> = {
  'auth.verifyEmail': { status: 400, reason: 'the token is mailed to the address being verified' },
  'auth.resetPassword': { status: 400, reason: 'the token is mailed by POST /auth/forgot-password' },
  'auth.acceptInvitation': { status: 400, reason: 'the token is mailed to the person invited' },
  'inboundWebhooks.stripe': {
    status: 404,
    reason: 'Stripe billing is off here (BILLING_DISABLED); Stripe signs these',
  },
  'inboundWebhooks.sns': { status: 400, reason: 'Amazon SNS signs these with its own certificate (INVALID_SIGNATURE)' },
};

/** Path parameters name resources: a sampled id names none, so those examples answer 404. */
const PATH_PARAMETER = { status: 404, reason: 'the path names a resource; the example id names none' };

let pigeon: TestPigeon;
let setup: Awaited<ReturnType<typeof newProject>>;
let document: Json;
beforeAll(async () => {
  pigeon = await startTestPigeon();
  setup = await newProject(pigeon);
  // untyped: outside the contract (the OpenAPI document)
  document = (await pigeon.request('GET', '/openapi.json')).body;
});
afterAll(() => pigeon?.stop());

interface Example {
  id: string;
  method: string;
  path: string;
  auth: string[];
  hasPathParameters: boolean;
  body: unknown;
  contentType: string;
}

function requestExamples(doc: Json): Example[] {
  const out: Example[] = [];
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const content = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      const [contentType, media] = Object.entries(content ?? {})[0] ?? [];
      if (!contentType || media?.example === undefined) continue;
      out.push({
        id: op.operationId as string,
        method: method.toUpperCase(),
        path,
        auth: ((op.security ?? []) as Json[]).flatMap((s) => Object.keys(s)),
        hasPathParameters: ((op.parameters ?? []) as Json[]).some((p) => p.in === 'path'),
        body: media.example,
        contentType,
      });
    }
  }
  return out;
}

describe('OpenAPI request examples, sent as they are', () => {
  it('every request body example answers 2xx, or the documented status', async () => {
    const examples = requestExamples(document);
    expect(examples.length).toBeGreaterThan(40);
    const outcomes: string[] = [];
    for (const example of examples) {
      if (example.contentType !== 'application/json') continue;
      const path = example.path.replace(/\{[^}]+\}/g, '0190c2a4-7b7e-7cc0-9a3f-1c2d3e4f5a6b');
      const headers: Record<string, string> = example.auth.includes('apiKey')
        ? setup.auth
        : example.auth.includes('session')
          ? { cookie: setup.owner.cookie, 'x-project-id': setup.project.id }
          : {};
      // untyped: every route (the OpenAPI document's examples, sent as they are)
      const res = await pigeon.request(example.method, path, { headers, body: example.body });
      const expected = EXPECTED[example.id] ?? (example.hasPathParameters ? PATH_PARAMETER : undefined);
      const ok = expected ? res.status === expected.status : res.status >= 200 && res.status < 300;
      outcomes.push(
        `${ok ? 'ok  ' : 'FAIL'} ${example.id} ${res.status} ${ok ? '' : JSON.stringify(res.body).slice(0, 300)}`,
      );
    }
    expect(outcomes.filter((o) => o.startsWith('FAIL'))).toEqual([]);
  }, 120_000);
});
