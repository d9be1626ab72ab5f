import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject, signUp } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { startTarget } from '../../../test/webhook-targets.js';
import { runStatement, sql } from '../../db/query.js';
import { createResolver } from '../domains/dns-check.js';
import { setProjectDisabled } from '../projects/service.js';
import { webhookSecrets } from './secrets.js';
import { sendWebhook } from './send.js';
import { newWebhookId } from './sign.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

const rotate = (projectId: string, cookie?: string) =>
  api(pigeon, cookie ? { cookie } : {}).users.rotateWebhookSecret({ params: { id: projectId } });

const WHSEC = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('POST /users/@me/projects/:id/webhook-secret', () => {
  it('returns a new whsec_ secret each time, shown nowhere else', async () => {
    const { owner, project } = await newProject(pigeon);
    const first = await rotate(project.id, owner.cookie);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      success: true,
      data: { secret: expect.stringMatching(WHSEC), createdAt: expect.any(String), previousSecretExpiresAt: null },
    });
    const second = bodyOf(await rotate(project.id, owner.cookie), 200).data;
    expect(second.secret).toMatch(WHSEC);
    expect(second.secret).not.toBe(bodyOf(first, 200).data.secret);
    const expires = Date.parse(second.previousSecretExpiresAt ?? '');
    expect(expires - Date.parse(second.createdAt)).toBe(24 * 3_600_000);

    const list = await api(pigeon, { cookie: owner.cookie }).users.listProjects();
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).toContain(project.id);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
  });

  it('is for OWNER and ADMIN: a MEMBER gets 403, a stranger 404, a disabled project 403', async () => {
    const { owner, project } = await newProject(pigeon);
    const [member, admin, stranger] = await Promise.all([signUp(pigeon), signUp(pigeon), signUp(pigeon)]);
    for (const [user, role] of [
      [member, 'MEMBER'],
      [admin, 'ADMIN'],
    ] as const) {
      const added = await api(pigeon, { cookie: owner.cookie }).projects.inviteMember({
        params: { id: project.id },
        body: { email: user.user.email, role },
      });
      expect(added.status).toBe(201);
    }
    expectEnvelope(await rotate(project.id, member.cookie), 403, 'INSUFFICIENT_ROLE');
    expectEnvelope(await rotate(project.id, stranger.cookie), 404, 'NOT_FOUND');
    expectEnvelope(await rotate(project.id), 401, 'UNAUTHORIZED');
    expect(bodyOf(await rotate(project.id, admin.cookie), 200).data.secret).toMatch(WHSEC);

    await setProjectDisabled(pigeon.deps.db.pool, project.id, 'abuse report');
    expectEnvelope(await rotate(project.id, owner.cookie), 403, 'PROJECT_DISABLED');
  });
});

describe('the secrets deliveries sign with', () => {
  it('creates one on first use, then signs with the new and the previous secret for 24 hours after a rotation', async () => {
    const { owner, project } = await newProject(pigeon);
    const { pool } = pigeon.deps.db;
    const initial = await webhookSecrets(pool, project.id);
    expect(initial).toEqual([expect.stringMatching(WHSEC)]);
    expect(await webhookSecrets(pool, project.id)).toEqual(initial);

    const rotated = bodyOf(await rotate(project.id, owner.cookie), 200).data.secret;
    const active = await webhookSecrets(pool, project.id);
    expect(active).toEqual([rotated, initial[0]]);

    const receiver = await startTarget();
    try {
      const result = await sendWebhook({
        url: `${receiver.origin}/hook`,
        body: { hello: 'world' },
        webhookId: newWebhookId(),
        secrets: active,
        allowPrivateNetworks: true,
        resolver: createResolver(undefined),
      });
      expect(result.outcome).toBe('success');
      const [received] = receiver.received;
      if (!received) throw new Error('nothing received');
      expect(String(received.headers['webhook-signature']).split(' ')).toHaveLength(2);
      const headers = received.headers as Record<string, string>;
      expect(new Webhook(rotated).verify(received.body, headers)).toEqual({ hello: 'world' });
      expect(new Webhook(initial[0] as string).verify(received.body, headers)).toEqual({ hello: 'world' });
    } finally {
      await receiver.close();
    }

    await runStatement(
      pool,
      sql`UPDATE project_webhook_secrets SET rotated_at = now() - interval '25 hours' WHERE project_id = ${project.id}`,
    );
    expect(await webhookSecrets(pool, project.id)).toEqual([rotated]);
  });
});
