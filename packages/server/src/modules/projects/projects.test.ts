import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, mailedToken, newProject, signUp, uniqueEmail } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { insertIdempotencyKey } from '../../../test/fixtures/idempotency.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { mountProbe } from '../../../test/probe.js';
import { until } from '../../../test/until.js';
import { queryRows, runStatement, sql } from '../../db/query.js';
import { deleteProjectKeys } from '../idempotency/service.js';
import { setProjectDisabled } from './service.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon({ mountExtraRoutes: mountProbe });
});
afterAll(() => pigeon?.stop());

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
// The `/__probe/*` routes are test-only (test/probe.ts), outside the contract: they stay on `pigeon.request`.
/** The typed client of a signed-in user's dashboard session. */
const as = (user: { cookie: string }) => api(pigeon, { cookie: user.cookie });
/** The first project in the user's list, as the user sees it. */
const seen = async (cookie: string) => bodyOf(await as({ cookie }).users.listProjects(), 200)[0];

describe('projects and keys', () => {
  it('gives a new project one pk_ and one sk_ key of 64 hex characters, owned by its creator', async () => {
    const { owner, project } = await newProject(pigeon);
    expect(project.publicKey).toMatch(/^pk_[0-9a-f]{64}$/);
    expect(project.secretKey).toMatch(/^sk_[0-9a-f]{64}$/);
    const list = await as(owner).users.listProjects();
    expect(list.body).toEqual([
      expect.objectContaining({ id: project.id, role: 'OWNER', secretKey: project.secretKey }),
    ]);
    // untyped: outside the contract (a test-only probe route)
    const probe = await pigeon.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) });
    expect(probe.body).toEqual({ projectId: project.id, via: 'key' });
  });

  it('rotates both keys at once: old keys fail immediately, new keys work', async () => {
    const { owner, project } = await newProject(pigeon);
    const rotated = bodyOf(await as(owner).users.regenerateKeys({ params: { id: project.id } }), 200);
    expect(rotated.publicKey).not.toBe(project.publicKey);
    expect(rotated.secretKey).not.toBe(project.secretKey);
    expectEnvelope(
      // untyped: outside the contract (a test-only probe route)
      await pigeon.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) }),
      401,
      'INVALID_API_KEY',
    );
    expectEnvelope(
      // untyped: outside the contract (a test-only probe route)
      await pigeon.request('POST', '/__probe/track', { headers: bearer(project.publicKey) }),
      401,
      'INVALID_API_KEY',
    );
    // untyped: outside the contract (a test-only probe route)
    expect((await pigeon.request('GET', '/__probe/secret', { headers: bearer(rotated.secretKey ?? '') })).status).toBe(
      200,
    );
    // untyped: outside the contract (a test-only probe route)
    expect((await pigeon.request('POST', '/__probe/track', { headers: bearer(rotated.publicKey) })).status).toBe(200);
  });

  it('rotation takes effect at once in a second server process on the same database', async () => {
    const { owner, project } = await newProject(pigeon);
    const other = await startTestPigeon({ databaseUrl: pigeon.deps.db.url, role: 'api', mountExtraRoutes: mountProbe });
    try {
      // untyped: outside the contract (a test-only probe route)
      expect((await other.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) })).status).toBe(200);
      const rotated = bodyOf(await as(owner).users.regenerateKeys({ params: { id: project.id } }), 200);
      expectEnvelope(
        // untyped: outside the contract (a test-only probe route)
        await other.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) }),
        401,
        'INVALID_API_KEY',
      );
      // untyped: outside the contract (a test-only probe route)
      expect((await other.request('GET', '/__probe/secret', { headers: bearer(rotated.secretKey ?? '') })).status).toBe(
        200,
      );
    } finally {
      await other.stop();
    }
  });
});

describe('key-type matrix', () => {
  it('accepts a public key only where tracking is allowed', async () => {
    const { project } = await newProject(pigeon);
    // untyped: outside the contract (a test-only probe route)
    const onSecret = await pigeon.request('GET', '/__probe/secret', { headers: bearer(project.publicKey) });
    expect(expectEnvelope(onSecret, 401, 'INVALID_API_KEY').message).toBe(
      'This endpoint requires a secret key, not a public key',
    );
    expectEnvelope(
      // untyped: outside the contract (a test-only probe route)
      await pigeon.request('GET', '/__probe/dashboard', { headers: bearer(project.publicKey) }),
      401,
      'INVALID_API_KEY',
    );
    expect(
      // untyped: outside the contract (a test-only probe route)
      (await pigeon.request('POST', '/__probe/track', { headers: bearer(project.publicKey) })).body.projectId,
    ).toBe(project.id);
    expect(
      // untyped: outside the contract (a test-only probe route)
      (await pigeon.request('POST', '/__probe/track', { headers: bearer(project.secretKey) })).body.projectId,
    ).toBe(project.id);
  });

  it('rejects missing, malformed and unknown keys with 401', async () => {
    // untyped: outside the contract (a test-only probe route)
    expectEnvelope(await pigeon.request('GET', '/__probe/secret'), 401, 'UNAUTHORIZED');
    expectEnvelope(
      // untyped: outside the contract (a test-only probe route)
      await pigeon.request('GET', '/__probe/secret', { headers: { authorization: 'Basic abc' } }),
      401,
      'UNAUTHORIZED',
    );
    expectEnvelope(
      // untyped: outside the contract (a test-only probe route)
      await pigeon.request('GET', '/__probe/secret', { headers: bearer('garbage') }),
      401,
      'INVALID_API_KEY',
    );
    expectEnvelope(
      // untyped: outside the contract (a test-only probe route)
      await pigeon.request('GET', '/__probe/secret', { headers: bearer(`sk_${'0'.repeat(64)}`) }),
      401,
      'INVALID_API_KEY',
    );
    expectEnvelope(
      // untyped: outside the contract (a test-only probe route)
      await pigeon.request('POST', '/__probe/track', { headers: bearer(`pk_${'a'.repeat(64)}`) }),
      401,
      'INVALID_API_KEY',
    );
  });
});

describe('session with X-Project-Id on dashboard routes', () => {
  it('lets a member act on the project and refuses a non-member with 403', async () => {
    const { owner, project } = await newProject(pigeon);
    // untyped: outside the contract (a test-only probe route)
    const member = await pigeon.request('GET', '/__probe/dashboard', {
      headers: { cookie: owner.cookie, 'x-project-id': project.id },
    });
    expect(member.body).toEqual({ projectId: project.id, via: 'session' });
    const stranger = await signUp(pigeon);
    // untyped: outside the contract (a test-only probe route)
    const refused = await pigeon.request('GET', '/__probe/dashboard', {
      headers: { cookie: stranger.cookie, 'x-project-id': project.id },
    });
    expectEnvelope(refused, 403, 'NOT_A_MEMBER');
    // untyped: outside the contract (a test-only probe route)
    const missing = await pigeon.request('GET', '/__probe/dashboard', { headers: { cookie: owner.cookie } });
    expectEnvelope(missing, 400, 'BAD_REQUEST');
  });

  it("hides another user's project behind 404 on project routes", async () => {
    const { project } = await newProject(pigeon);
    const stranger = await signUp(pigeon);
    expectEnvelope(await as(stranger).projects.listMembers({ params: { id: project.id } }), 404, 'NOT_FOUND');
  });
});

describe('members and roles', () => {
  it('adds an existing user at once and mails an invitation to an unknown address', async () => {
    const { owner, project } = await newProject(pigeon);
    const existing = await signUp(pigeon);
    const added = await as(owner).projects.inviteMember({
      params: { id: project.id },
      body: { email: existing.user.email, role: 'ADMIN' },
    });
    expect(added.body).toMatchObject({ status: 'added', member: { userId: existing.user.id, role: 'ADMIN' } });

    const invitee = uniqueEmail('invitee');
    const invited = await as(owner).projects.inviteMember({ params: { id: project.id }, body: { email: invitee } });
    expect(invited.body).toMatchObject({ status: 'invited', invitation: { email: invitee, role: 'MEMBER' } });
    const token = mailedToken(pigeon, invitee);

    const wrongUser = await signUp(pigeon);
    expectEnvelope(await as(wrongUser).auth.acceptInvitation({ body: { token } }), 403, 'INVITATION_EMAIL_MISMATCH');
    const joined = await signUp(pigeon, invitee);
    const accepted = await as(joined).auth.acceptInvitation({ body: { token } });
    expect(accepted.body).toEqual({ projectId: project.id, role: 'MEMBER' });
    const members = bodyOf(await as(joined).projects.listMembers({ params: { id: project.id } }), 200);
    expect(members.members.map((m) => m.email)).toContain(invitee);
    expect(members.invitations).toEqual([]);
  });

  it('lets only OWNER and ADMIN manage members, keys and settings', async () => {
    const { owner, project } = await newProject(pigeon);
    const member = await signUp(pigeon);
    await addMember(project.id, owner.cookie, member.user.email, 'MEMBER');
    const params = { id: project.id };
    expectEnvelope(await as(member).users.regenerateKeys({ params }), 403, 'INSUFFICIENT_ROLE');
    expectEnvelope(await as(member).users.updateProject({ params, body: { name: 'x' } }), 403, 'INSUFFICIENT_ROLE');
    expectEnvelope(
      await as(member).projects.inviteMember({ params, body: { email: uniqueEmail() } }),
      403,
      'INSUFFICIENT_ROLE',
    );
    const renamed = await as(owner).users.updateProject({
      params,
      body: { name: 'Renamed', trackingMode: 'MARKETING_ONLY' },
    });
    expect(renamed.body).toMatchObject({ name: 'Renamed', trackingMode: 'MARKETING_ONLY' });
    // Settings repeated as they are change nothing, updatedAt included; a real change moves it.
    const { updatedAt } = bodyOf(renamed, 200);
    const same = await as(owner).users.updateProject({
      params,
      body: { name: 'Renamed', trackingMode: 'MARKETING_ONLY' },
    });
    expect(bodyOf(same, 200).updatedAt).toBe(updatedAt);
    const changed = await as(owner).users.updateProject({ params, body: { name: 'Renamed again' } });
    expect(bodyOf(changed, 200).updatedAt > updatedAt).toBe(true);
  });

  it('never leaves a project without an OWNER, and keeps OWNER grants to OWNERs', async () => {
    const { owner, project } = await newProject(pigeon);
    const admin = await signUp(pigeon);
    await addMember(project.id, owner.cookie, admin.user.email, 'ADMIN');
    const ownerParams = { id: project.id, userId: owner.user.id };
    expectEnvelope(
      await as(owner).projects.updateMember({ params: ownerParams, body: { role: 'ADMIN' } }),
      409,
      'CONFLICT',
    );
    expectEnvelope(await as(owner).projects.removeMember({ params: ownerParams }), 409, 'CONFLICT');
    expectEnvelope(await as(admin).projects.removeMember({ params: ownerParams }), 403, 'INSUFFICIENT_ROLE');
    const adminParams = { id: project.id, userId: admin.user.id };
    expectEnvelope(
      await as(admin).projects.updateMember({ params: adminParams, body: { role: 'OWNER' } }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expect(
      bodyOf(await as(owner).projects.updateMember({ params: adminParams, body: { role: 'OWNER' } }), 200).role,
    ).toBe('OWNER');
    // With two owners, the first may now step down.
    expect(
      bodyOf(await as(owner).projects.updateMember({ params: ownerParams, body: { role: 'MEMBER' } }), 200).role,
    ).toBe('MEMBER');
    expect((await as(admin).projects.removeMember({ params: ownerParams })).status).toBe(200);
  });

  it('holds the last-OWNER rule when two OWNERs demote or remove each other at the same moment', async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < 6; round++) {
      const { owner: a, project } = await newProject(pigeon);
      const b = await signUp(pigeon);
      await addMember(project.id, a.cookie, b.user.email, 'OWNER');
      const change = (actor: { cookie: string }, target: { user: { id: string } }) => {
        const params = { id: project.id, userId: target.user.id };
        return round % 2 === 0
          ? as(actor).projects.updateMember({ params, body: { role: 'ADMIN' } })
          : as(actor).projects.removeMember({ params });
      };
      const answers = await Promise.all([change(a, b), change(b, a)]);
      outcomes.push(answers.map((r) => r.status).join('+'));
      const rows = await queryRows(
        pigeon.deps.db.pool,
        sql`SELECT count(*)::int AS owners FROM memberships WHERE project_id = ${project.id} AND role = 'OWNER'`,
      );
      expect(rows[0]?.owners, `round ${round}: ${outcomes.at(-1)}`).toBe(1);
      // Exactly one of the two changes happened; the other was refused (409, or 403/404 once its actor lost the role).
      expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
      expect([403, 404, 409]).toContain(answers.find((r) => r.status !== 200)?.status);
    }
  });
});

async function addMember(projectId: string, cookie: string, email: string, role: 'OWNER' | 'ADMIN' | 'MEMBER') {
  const res = await as({ cookie }).projects.inviteMember({ params: { id: projectId }, body: { email, role } });
  expect(res.status).toBe(201);
}

describe('who sees the secret key', () => {
  it('shows the secret key to OWNER and ADMIN only; a MEMBER sees the public key', async () => {
    const { owner, project } = await newProject(pigeon);
    const admin = await signUp(pigeon);
    const member = await signUp(pigeon);
    await addMember(project.id, owner.cookie, admin.user.email, 'ADMIN');
    await addMember(project.id, owner.cookie, member.user.email, 'MEMBER');
    expect(await seen(admin.cookie)).toMatchObject({ role: 'ADMIN', secretKey: project.secretKey });
    expect(await seen(member.cookie)).toMatchObject({
      role: 'MEMBER',
      publicKey: project.publicKey,
      secretKey: null,
    });
    expect(JSON.stringify(await seen(member.cookie))).not.toContain('sk_');
    // A MEMBER's own session is refused a manager's action, and has no key to do it with instead.
    expectEnvelope(
      await api(pigeon, { cookie: member.cookie, 'x-project-id': project.id }).domains.create({
        body: { domain: 'member.example' },
      }),
      403,
      'INSUFFICIENT_ROLE',
    );
    // Promoted, the same user sees it.
    await as(owner).projects.updateMember({
      params: { id: project.id, userId: member.user.id },
      body: { role: 'ADMIN' },
    });
    expect((await seen(member.cookie))?.secretKey).toBe(project.secretKey);
  });

  it('says when a removed member could see the secret key and suggests rotating; not after a rotation', async () => {
    const { owner, project } = await newProject(pigeon);
    const admin = await signUp(pigeon);
    const member = await signUp(pigeon);
    const demoted = await signUp(pigeon);
    await addMember(project.id, owner.cookie, admin.user.email, 'ADMIN');
    await addMember(project.id, owner.cookie, member.user.email, 'MEMBER');
    await addMember(project.id, owner.cookie, demoted.user.email, 'ADMIN');
    const remove = async (userId: string) =>
      bodyOf(await as(owner).projects.removeMember({ params: { id: project.id, userId } }), 200);

    const adminGone = await remove(admin.user.id);
    expect(adminGone).toMatchObject({ removed: { userId: admin.user.id, role: 'ADMIN' }, sawSecretKey: true });
    expect(adminGone.suggestion).toContain(`/users/@me/projects/${project.id}/regenerate-keys`);

    const memberGone = await remove(member.user.id);
    expect(memberGone).toEqual({
      removed: expect.objectContaining({ userId: member.user.id, role: 'MEMBER' }),
      sawSecretKey: false,
    });

    // An ADMIN demoted to MEMBER still saw the current key, until the keys are rotated.
    await as(owner).projects.updateMember({
      params: { id: project.id, userId: demoted.user.id },
      body: { role: 'MEMBER' },
    });
    expect(await seen(demoted.cookie)).toMatchObject({ secretKey: null });
    await as(owner).users.regenerateKeys({ params: { id: project.id } });
    expect((await remove(demoted.user.id)).sawSecretKey).toBe(false);
  });
});

describe('project lifecycle', () => {
  it('reset wipes data but keeps the project, its members and keys', async () => {
    const { owner, project } = await newProject(pigeon);
    expect(bodyOf(await as(owner).users.resetProject({ params: { id: project.id } }), 200).success).toBe(true);
    const list = bodyOf(await as(owner).users.listProjects(), 200);
    expect(list[0]).toMatchObject({ id: project.id, secretKey: project.secretKey, role: 'OWNER' });
    // untyped: outside the contract (a test-only probe route)
    expect((await pigeon.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) })).status).toBe(200);
  });

  it('a disabled project can read but every write is 403', async () => {
    const { owner, project } = await newProject(pigeon);
    await setProjectDisabled(pigeon.deps.db.pool, project.id, 'abuse report');
    // untyped: outside the contract (a test-only probe route)
    expect((await pigeon.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) })).status).toBe(200);
    // untyped: outside the contract (a test-only probe route)
    const write = await pigeon.request('POST', '/__probe/secret', { headers: bearer(project.secretKey) });
    expect(expectEnvelope(write, 403, 'PROJECT_DISABLED').details).toEqual({ reason: 'abuse report' });
    expectEnvelope(
      // untyped: outside the contract (a test-only probe route)
      await pigeon.request('POST', '/__probe/track', { headers: bearer(project.publicKey) }),
      403,
      'PROJECT_DISABLED',
    );
    expectEnvelope(
      // untyped: outside the contract (a test-only probe route)
      await pigeon.request('POST', '/__probe/dashboard', {
        headers: { cookie: owner.cookie, 'x-project-id': project.id },
      }),
      403,
      'PROJECT_DISABLED',
    );
    expectEnvelope(await as(owner).users.regenerateKeys({ params: { id: project.id } }), 403, 'PROJECT_DISABLED');
    const security = bodyOf(await as(owner).projects.security({ params: { id: project.id } }), 200);
    expect(security).toMatchObject({
      disabled: true,
      disabledReason: 'abuse report',
      emailsSent: 0,
      bounceRate: 0,
    });
    expect(security.recentSuspensions).toEqual([{ at: expect.any(String), reason: 'abuse report' }]);
    await setProjectDisabled(pigeon.deps.db.pool, project.id, null);
    // untyped: outside the contract (a test-only probe route)
    expect((await pigeon.request('POST', '/__probe/secret', { headers: bearer(project.secretKey) })).status).toBe(200);
  });

  it('reports setup steps, done once the project has the data', async () => {
    const { owner, project } = await newProject(pigeon);
    const setup = bodyOf(await as(owner).projects.setupState({ params: { id: project.id } }), 200);
    expect(setup.completed).toBe(false);
    expect(setup.steps.map((s) => s.id)).toEqual([
      'verify_domain',
      'send_first_email',
      'track_first_event',
      'add_contacts',
    ]);
    expect(setup.steps.every((s) => !s.done)).toBe(true);
    await api(pigeon, bearer(project.publicKey)).events.track({ body: { email: 'a@example.com', event: 'x' } });
    await api(pigeon, bearer(project.secretKey)).domains.create({
      body: { domain: `setup-${project.id.slice(-8)}.example` },
    });
    const after = bodyOf(await as(owner).projects.setupState({ params: { id: project.id } }), 200);
    const done = Object.fromEntries(after.steps.map((s) => [s.id, s.done]));
    expect(done).toEqual({ verify_domain: true, send_first_email: false, track_first_event: true, add_contacts: true });
  });

  it('deletes a project (OWNER only) and its keys stop working', async () => {
    const { owner, project } = await newProject(pigeon);
    const second = await createProject(pigeon, owner.cookie, 'Second');
    expect((await as(owner).users.deleteProject({ params: { id: second.id } })).status).toBe(204);
    expectEnvelope(
      // untyped: outside the contract (a test-only probe route)
      await pigeon.request('GET', '/__probe/secret', { headers: bearer(second.secretKey) }),
      401,
      'INVALID_API_KEY',
    );
    // untyped: outside the contract (a test-only probe route)
    expect((await pigeon.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) })).status).toBe(200);
  });

  // idempotency_keys has no foreign key to projects (Migration20261228000000): the deletion removes them.
  const keysOf = async (projectId: string) =>
    (
      await queryRows<{ n: number }>(
        pigeon.deps.db.pool,
        sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE project_id = ${projectId}::uuid`,
      )
    )[0]?.n;
  const keyedTrack = (key: string, projectKey: string) =>
    api(pigeon, { ...bearer(projectKey), 'idempotency-key': key }).events.track({
      body: { email: 'keyed@example.com', event: 'x' },
    });

  it("deletes the project's Idempotency-Key claims with it", async () => {
    const { owner } = await newProject(pigeon);
    const doomed = await createProject(pigeon, owner.cookie, 'Doomed');
    expect((await keyedTrack('track-1', doomed.publicKey)).status).toBe(200);
    await insertIdempotencyKey(pigeon.deps.db.pool, { projectId: doomed.id, key: 'send-1', request: 'POST /v1/send' });
    expect(await keyedTrack('track-1', doomed.publicKey)).toMatchObject({ status: 409 });
    expect(await keysOf(doomed.id)).toBe(2);
    expect((await as(owner).users.deleteProject({ params: { id: doomed.id } })).status).toBe(204);
    expect(await keysOf(doomed.id)).toBe(0);
  });

  it('a keyed track racing the deletion waits for it, then claims nothing', async () => {
    const { owner } = await newProject(pigeon);
    const doomed = await createProject(pigeon, owner.cookie, 'Doomed');
    const lockWaits = async () =>
      (
        await queryRows<{ n: number }>(
          pigeon.deps.db.pool,
          sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%key_project%'`,
        )
      )[0]?.n;
    const deleting = await pigeon.deps.db.pool.connect();
    try {
      await deleting.query('BEGIN');
      await runStatement(deleting, sql`DELETE FROM projects WHERE id = ${doomed.id}::uuid`);
      const track = keyedTrack('racing', doomed.publicKey);
      expect(await until(lockWaits, (n) => n === 1)).toBe(1);
      await deleteProjectKeys(deleting, doomed.id);
      await deleting.query('COMMIT');
      expect((await track).status).toBe(401);
    } finally {
      deleting.release();
    }
    expect(await keysOf(doomed.id)).toBe(0);
  });
});
