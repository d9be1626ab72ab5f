import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, mailedToken, newProject, signUp, uniqueEmail } from '../../../test/accounts.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { mountProbe } from '../../../test/probe.js';
import { setProjectDisabled } from './service.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon({ mountExtraRoutes: mountProbe });
});
afterAll(() => pigeon?.stop());

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('projects and keys', () => {
  it('gives a new project one pk_ and one sk_ key of 64 hex characters, owned by its creator', async () => {
    const { owner, project } = await newProject(pigeon);
    expect(project.publicKey).toMatch(/^pk_[0-9a-f]{64}$/);
    expect(project.secretKey).toMatch(/^sk_[0-9a-f]{64}$/);
    const list = await pigeon.request('GET', '/users/@me/projects', { headers: { cookie: owner.cookie } });
    expect(list.body).toEqual([
      expect.objectContaining({ id: project.id, role: 'OWNER', secretKey: project.secretKey }),
    ]);
    const probe = await pigeon.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) });
    expect(probe.body).toEqual({ projectId: project.id, via: 'key' });
  });

  it('rotates both keys at once: old keys fail immediately, new keys work', async () => {
    const { owner, project } = await newProject(pigeon);
    const res = await pigeon.request('POST', `/users/@me/projects/${project.id}/regenerate-keys`, {
      headers: { cookie: owner.cookie },
    });
    expect(res.status).toBe(200);
    expect(res.body.publicKey).not.toBe(project.publicKey);
    expect(res.body.secretKey).not.toBe(project.secretKey);
    expectEnvelope(
      await pigeon.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) }),
      401,
      'INVALID_API_KEY',
    );
    expectEnvelope(
      await pigeon.request('POST', '/__probe/track', { headers: bearer(project.publicKey) }),
      401,
      'INVALID_API_KEY',
    );
    expect((await pigeon.request('GET', '/__probe/secret', { headers: bearer(res.body.secretKey) })).status).toBe(200);
    expect((await pigeon.request('POST', '/__probe/track', { headers: bearer(res.body.publicKey) })).status).toBe(200);
  });

  it('rotation takes effect at once in a second server process on the same database', async () => {
    const { owner, project } = await newProject(pigeon);
    const other = await startTestPigeon({ databaseUrl: pigeon.deps.db.url, role: 'api', mountExtraRoutes: mountProbe });
    try {
      expect((await other.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) })).status).toBe(200);
      const rotated = await pigeon.request('POST', `/users/@me/projects/${project.id}/regenerate-keys`, {
        headers: { cookie: owner.cookie },
      });
      expectEnvelope(
        await other.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) }),
        401,
        'INVALID_API_KEY',
      );
      expect((await other.request('GET', '/__probe/secret', { headers: bearer(rotated.body.secretKey) })).status).toBe(
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
    const onSecret = await pigeon.request('GET', '/__probe/secret', { headers: bearer(project.publicKey) });
    expect(expectEnvelope(onSecret, 401, 'INVALID_API_KEY').message).toBe(
      'This endpoint requires a secret key, not a public key',
    );
    expectEnvelope(
      await pigeon.request('GET', '/__probe/dashboard', { headers: bearer(project.publicKey) }),
      401,
      'INVALID_API_KEY',
    );
    expect(
      (await pigeon.request('POST', '/__probe/track', { headers: bearer(project.publicKey) })).body.projectId,
    ).toBe(project.id);
    expect(
      (await pigeon.request('POST', '/__probe/track', { headers: bearer(project.secretKey) })).body.projectId,
    ).toBe(project.id);
  });

  it('rejects missing, malformed and unknown keys with 401', async () => {
    expectEnvelope(await pigeon.request('GET', '/__probe/secret'), 401, 'UNAUTHORIZED');
    expectEnvelope(
      await pigeon.request('GET', '/__probe/secret', { headers: { authorization: 'Basic abc' } }),
      401,
      'UNAUTHORIZED',
    );
    expectEnvelope(
      await pigeon.request('GET', '/__probe/secret', { headers: bearer('garbage') }),
      401,
      'INVALID_API_KEY',
    );
    expectEnvelope(
      await pigeon.request('GET', '/__probe/secret', { headers: bearer(`sk_${'0'.repeat(64)}`) }),
      401,
      'INVALID_API_KEY',
    );
    expectEnvelope(
      await pigeon.request('POST', '/__probe/track', { headers: bearer(`pk_${'a'.repeat(64)}`) }),
      401,
      'INVALID_API_KEY',
    );
  });
});

describe('session with X-Project-Id on dashboard routes', () => {
  it('lets a member act on the project and refuses a non-member with 403', async () => {
    const { owner, project } = await newProject(pigeon);
    const member = await pigeon.request('GET', '/__probe/dashboard', {
      headers: { cookie: owner.cookie, 'x-project-id': project.id },
    });
    expect(member.body).toEqual({ projectId: project.id, via: 'session' });
    const stranger = await signUp(pigeon);
    const refused = await pigeon.request('GET', '/__probe/dashboard', {
      headers: { cookie: stranger.cookie, 'x-project-id': project.id },
    });
    expectEnvelope(refused, 403, 'NOT_A_MEMBER');
    const missing = await pigeon.request('GET', '/__probe/dashboard', { headers: { cookie: owner.cookie } });
    expectEnvelope(missing, 400, 'BAD_REQUEST');
  });

  it("hides another user's project behind 404 on project routes", async () => {
    const { project } = await newProject(pigeon);
    const stranger = await signUp(pigeon);
    const res = await pigeon.request('GET', `/projects/${project.id}/members`, {
      headers: { cookie: stranger.cookie },
    });
    expectEnvelope(res, 404, 'NOT_FOUND');
  });
});

describe('members and roles', () => {
  it('adds an existing user at once and mails an invitation to an unknown address', async () => {
    const { owner, project } = await newProject(pigeon);
    const existing = await signUp(pigeon);
    const added = await pigeon.request('POST', `/projects/${project.id}/members`, {
      headers: { cookie: owner.cookie },
      body: { email: existing.user.email, role: 'ADMIN' },
    });
    expect(added.body).toMatchObject({ status: 'added', member: { userId: existing.user.id, role: 'ADMIN' } });

    const invitee = uniqueEmail('invitee');
    const invited = await pigeon.request('POST', `/projects/${project.id}/members`, {
      headers: { cookie: owner.cookie },
      body: { email: invitee },
    });
    expect(invited.body).toMatchObject({ status: 'invited', invitation: { email: invitee, role: 'MEMBER' } });
    const token = mailedToken(pigeon, invitee);

    const wrongUser = await signUp(pigeon);
    expectEnvelope(
      await pigeon.request('POST', '/auth/accept-invitation', {
        headers: { cookie: wrongUser.cookie },
        body: { token },
      }),
      403,
      'INVITATION_EMAIL_MISMATCH',
    );
    const joined = await signUp(pigeon, invitee);
    const accepted = await pigeon.request('POST', '/auth/accept-invitation', {
      headers: { cookie: joined.cookie },
      body: { token },
    });
    expect(accepted.body).toEqual({ projectId: project.id, role: 'MEMBER' });
    const members = await pigeon.request('GET', `/projects/${project.id}/members`, {
      headers: { cookie: joined.cookie },
    });
    expect(members.body.members.map((m: { email: string }) => m.email)).toContain(invitee);
    expect(members.body.invitations).toEqual([]);
  });

  it('lets only OWNER and ADMIN manage members, keys and settings', async () => {
    const { owner, project } = await newProject(pigeon);
    const member = await signUp(pigeon);
    await pigeon.request('POST', `/projects/${project.id}/members`, {
      headers: { cookie: owner.cookie },
      body: { email: member.user.email },
    });
    const asMember = { headers: { cookie: member.cookie } };
    expectEnvelope(
      await pigeon.request('POST', `/users/@me/projects/${project.id}/regenerate-keys`, asMember),
      403,
      'INSUFFICIENT_ROLE',
    );
    expectEnvelope(
      await pigeon.request('PATCH', `/users/@me/projects/${project.id}`, { ...asMember, body: { name: 'x' } }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expectEnvelope(
      await pigeon.request('POST', `/projects/${project.id}/members`, { ...asMember, body: { email: uniqueEmail() } }),
      403,
      'INSUFFICIENT_ROLE',
    );
    const renamed = await pigeon.request('PATCH', `/users/@me/projects/${project.id}`, {
      headers: { cookie: owner.cookie },
      body: { name: 'Renamed', trackingMode: 'MARKETING_ONLY' },
    });
    expect(renamed.body).toMatchObject({ name: 'Renamed', trackingMode: 'MARKETING_ONLY' });
  });

  it('never leaves a project without an OWNER, and keeps OWNER grants to OWNERs', async () => {
    const { owner, project } = await newProject(pigeon);
    const admin = await signUp(pigeon);
    await pigeon.request('POST', `/projects/${project.id}/members`, {
      headers: { cookie: owner.cookie },
      body: { email: admin.user.email, role: 'ADMIN' },
    });
    const path = `/projects/${project.id}/members/${owner.user.id}`;
    expectEnvelope(
      await pigeon.request('PATCH', path, { headers: { cookie: owner.cookie }, body: { role: 'ADMIN' } }),
      409,
      'CONFLICT',
    );
    expectEnvelope(await pigeon.request('DELETE', path, { headers: { cookie: owner.cookie } }), 409, 'CONFLICT');
    expectEnvelope(
      await pigeon.request('DELETE', path, { headers: { cookie: admin.cookie } }),
      403,
      'INSUFFICIENT_ROLE',
    );
    const adminPath = `/projects/${project.id}/members/${admin.user.id}`;
    expectEnvelope(
      await pigeon.request('PATCH', adminPath, { headers: { cookie: admin.cookie }, body: { role: 'OWNER' } }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expect(
      (await pigeon.request('PATCH', adminPath, { headers: { cookie: owner.cookie }, body: { role: 'OWNER' } })).body
        .role,
    ).toBe('OWNER');
    // With two owners, the first may now step down.
    expect(
      (await pigeon.request('PATCH', path, { headers: { cookie: owner.cookie }, body: { role: 'MEMBER' } })).body.role,
    ).toBe('MEMBER');
    expect((await pigeon.request('DELETE', path, { headers: { cookie: admin.cookie } })).status).toBe(200);
  });

  it('holds the last-OWNER rule when two OWNERs demote or remove each other at the same moment', async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < 6; round++) {
      const { owner: a, project } = await newProject(pigeon);
      const b = await signUp(pigeon);
      await addMember(project.id, a.cookie, b.user.email, 'OWNER');
      const change = (actor: { cookie: string }, target: { user: { id: string } }) => {
        const path = `/projects/${project.id}/members/${target.user.id}`;
        return round % 2 === 0
          ? pigeon.request('PATCH', path, { headers: { cookie: actor.cookie }, body: { role: 'ADMIN' } })
          : pigeon.request('DELETE', path, { headers: { cookie: actor.cookie } });
      };
      const answers = await Promise.all([change(a, b), change(b, a)]);
      outcomes.push(answers.map((r) => r.status).join('+'));
      const { rows } = await pigeon.deps.db.pool.query(
        "SELECT count(*)::int AS owners FROM memberships WHERE project_id = $1 AND role = 'OWNER'",
        [project.id],
      );
      expect(rows[0].owners, `round ${round}: ${outcomes.at(-1)}`).toBe(1);
      // Exactly one of the two changes happened; the other was refused (409, or 403/404 once its actor lost the role).
      expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
      expect([403, 404, 409]).toContain(answers.find((r) => r.status !== 200)?.status);
    }
  });
});

async function addMember(projectId: string, cookie: string, email: string, role: 'OWNER' | 'ADMIN' | 'MEMBER') {
  const res = await pigeon.request('POST', `/projects/${projectId}/members`, {
    headers: { cookie },
    body: { email, role },
  });
  expect(res.status).toBe(201);
}

describe('who sees the secret key', () => {
  it('shows the secret key to OWNER and ADMIN only; a MEMBER sees the public key', async () => {
    const { owner, project } = await newProject(pigeon);
    const admin = await signUp(pigeon);
    const member = await signUp(pigeon);
    await addMember(project.id, owner.cookie, admin.user.email, 'ADMIN');
    await addMember(project.id, owner.cookie, member.user.email, 'MEMBER');
    const seen = async (cookie: string) =>
      (await pigeon.request('GET', '/users/@me/projects', { headers: { cookie } })).body[0];
    expect(await seen(admin.cookie)).toMatchObject({ role: 'ADMIN', secretKey: project.secretKey });
    expect(await seen(member.cookie)).toMatchObject({
      role: 'MEMBER',
      publicKey: project.publicKey,
      secretKey: null,
    });
    expect(JSON.stringify(await seen(member.cookie))).not.toContain('sk_');
    // A MEMBER's own session is refused a manager's action, and has no key to do it with instead.
    expectEnvelope(
      await pigeon.request('POST', '/domains', {
        headers: { cookie: member.cookie, 'x-project-id': project.id },
        body: { domain: 'member.example' },
      }),
      403,
      'INSUFFICIENT_ROLE',
    );
    // Promoted, the same user sees it.
    await pigeon.request('PATCH', `/projects/${project.id}/members/${member.user.id}`, {
      headers: { cookie: owner.cookie },
      body: { role: 'ADMIN' },
    });
    expect((await seen(member.cookie)).secretKey).toBe(project.secretKey);
  });

  it('says when a removed member could see the secret key and suggests rotating; not after a rotation', async () => {
    const { owner, project } = await newProject(pigeon);
    const admin = await signUp(pigeon);
    const member = await signUp(pigeon);
    const demoted = await signUp(pigeon);
    await addMember(project.id, owner.cookie, admin.user.email, 'ADMIN');
    await addMember(project.id, owner.cookie, member.user.email, 'MEMBER');
    await addMember(project.id, owner.cookie, demoted.user.email, 'ADMIN');
    const remove = (userId: string) =>
      pigeon.request('DELETE', `/projects/${project.id}/members/${userId}`, { headers: { cookie: owner.cookie } });

    const adminGone = await remove(admin.user.id);
    expect(adminGone.status).toBe(200);
    expect(adminGone.body).toMatchObject({ removed: { userId: admin.user.id, role: 'ADMIN' }, sawSecretKey: true });
    expect(adminGone.body.suggestion).toContain(`/users/@me/projects/${project.id}/regenerate-keys`);

    const memberGone = await remove(member.user.id);
    expect(memberGone.body).toEqual({
      removed: expect.objectContaining({ userId: member.user.id, role: 'MEMBER' }),
      sawSecretKey: false,
    });

    // An ADMIN demoted to MEMBER still saw the current key, until the keys are rotated.
    await pigeon.request('PATCH', `/projects/${project.id}/members/${demoted.user.id}`, {
      headers: { cookie: owner.cookie },
      body: { role: 'MEMBER' },
    });
    expect(
      (await pigeon.request('GET', '/users/@me/projects', { headers: { cookie: demoted.cookie } })).body[0],
    ).toMatchObject({ secretKey: null });
    await pigeon.request('POST', `/users/@me/projects/${project.id}/regenerate-keys`, {
      headers: { cookie: owner.cookie },
    });
    expect((await remove(demoted.user.id)).body.sawSecretKey).toBe(false);
  });
});

describe('project lifecycle', () => {
  it('reset wipes data but keeps the project, its members and keys', async () => {
    const { owner, project } = await newProject(pigeon);
    const res = await pigeon.request('POST', `/users/@me/projects/${project.id}/reset`, {
      headers: { cookie: owner.cookie },
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const list = await pigeon.request('GET', '/users/@me/projects', { headers: { cookie: owner.cookie } });
    expect(list.body[0]).toMatchObject({ id: project.id, secretKey: project.secretKey, role: 'OWNER' });
    expect((await pigeon.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) })).status).toBe(200);
  });

  it('a disabled project can read but every write is 403', async () => {
    const { owner, project } = await newProject(pigeon);
    await setProjectDisabled(pigeon.deps.db.orm.em.fork(), project.id, 'abuse report');
    expect((await pigeon.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) })).status).toBe(200);
    const write = await pigeon.request('POST', '/__probe/secret', { headers: bearer(project.secretKey) });
    expect(expectEnvelope(write, 403, 'PROJECT_DISABLED').details).toEqual({ reason: 'abuse report' });
    expectEnvelope(
      await pigeon.request('POST', '/__probe/track', { headers: bearer(project.publicKey) }),
      403,
      'PROJECT_DISABLED',
    );
    expectEnvelope(
      await pigeon.request('POST', '/__probe/dashboard', {
        headers: { cookie: owner.cookie, 'x-project-id': project.id },
      }),
      403,
      'PROJECT_DISABLED',
    );
    expectEnvelope(
      await pigeon.request('POST', `/users/@me/projects/${project.id}/regenerate-keys`, {
        headers: { cookie: owner.cookie },
      }),
      403,
      'PROJECT_DISABLED',
    );
    const security = await pigeon.request('GET', `/projects/${project.id}/security`, {
      headers: { cookie: owner.cookie },
    });
    expect(security.body).toMatchObject({
      disabled: true,
      disabledReason: 'abuse report',
      emailsSent: 0,
      bounceRate: 0,
    });
    expect(security.body.recentSuspensions).toEqual([{ at: expect.any(String), reason: 'abuse report' }]);
    await setProjectDisabled(pigeon.deps.db.orm.em.fork(), project.id, null);
    expect((await pigeon.request('POST', '/__probe/secret', { headers: bearer(project.secretKey) })).status).toBe(200);
  });

  it('reports setup steps, done once the project has the data', async () => {
    const { owner, project } = await newProject(pigeon);
    const res = await pigeon.request('GET', `/projects/${project.id}/setup-state`, {
      headers: { cookie: owner.cookie },
    });
    expect(res.body.completed).toBe(false);
    expect(res.body.steps.map((s: { id: string }) => s.id)).toEqual([
      'verify_domain',
      'send_first_email',
      'track_first_event',
      'add_contacts',
    ]);
    expect(res.body.steps.every((s: { done: boolean }) => !s.done)).toBe(true);
    await pigeon.request('POST', '/v1/track', {
      headers: bearer(project.publicKey),
      body: { email: 'a@example.com', event: 'x' },
    });
    await pigeon.request('POST', '/domains', {
      headers: bearer(project.secretKey),
      body: { domain: `setup-${project.id.slice(-8)}.example` },
    });
    const after = await pigeon.request('GET', `/projects/${project.id}/setup-state`, {
      headers: { cookie: owner.cookie },
    });
    const done = Object.fromEntries(after.body.steps.map((s: { id: string; done: boolean }) => [s.id, s.done]));
    expect(done).toEqual({ verify_domain: true, send_first_email: false, track_first_event: true, add_contacts: true });
  });

  it('deletes a project (OWNER only) and its keys stop working', async () => {
    const { owner, project } = await newProject(pigeon);
    const second = await createProject(pigeon, owner.cookie, 'Second');
    expect(
      (await pigeon.request('DELETE', `/users/@me/projects/${second.id}`, { headers: { cookie: owner.cookie } }))
        .status,
    ).toBe(204);
    expectEnvelope(
      await pigeon.request('GET', '/__probe/secret', { headers: bearer(second.secretKey) }),
      401,
      'INVALID_API_KEY',
    );
    expect((await pigeon.request('GET', '/__probe/secret', { headers: bearer(project.secretKey) })).status).toBe(200);
  });
});
