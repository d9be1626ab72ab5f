import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { Request } from 'express';
import type { AppDeps } from '../../deps.js';
import { callerUser } from '../../kit/caller.js';
import { toUserDto } from '../accounts/public.js';
import { memberSecurityState, memberSetupState, resumePausedCampaigns } from './insights.js';
import * as members from './members.js';
import { resetProject } from './project-data.js';
import * as projects from './service.js';
import { regenerateWebhookSecret } from './webhook-secret.js';

const s = initServer();

/** `GET /users/@me/projects/:id/security` and `GET /projects/:id/security`: one handler, two paths. */
const security =
  (deps: AppDeps) =>
  async ({ req, params }: { req: Request; params: { id: string } }) => ({
    status: 200 as const,
    body: await memberSecurityState(deps, callerUser(req).id, params.id),
  });

export const createUsersRouter = (deps: AppDeps) => {
  return s.router(contract.users, {
    me: async ({ req }) => ({ status: 200, body: toUserDto(callerUser(req)) }),
    listProjects: async ({ req }) => ({
      status: 200,
      body: await projects.listProjects(deps.db.pool, callerUser(req).id),
    }),
    createProject: async ({ req, body }) => {
      const project = await projects.createProject(deps.db.pool, callerUser(req).id, body.name);
      return { status: 201, body: projects.toProjectDto(project, 'OWNER') };
    },
    updateProject: async ({ req, params, body }) => ({
      status: 200,
      body: await projects.updateProject(deps, callerUser(req).id, params.id, body),
    }),
    deleteProject: async ({ req, params }) => {
      await projects.deleteProject(deps.db.pool, callerUser(req).id, params.id);
      return { status: 204, body: undefined };
    },
    regenerateKeys: async ({ req, params }) => ({
      status: 200,
      body: await projects.regenerateKeys(deps.db.pool, callerUser(req).id, params.id),
    }),
    rotateWebhookSecret: async ({ req, params }) => ({
      status: 200,
      body: {
        success: true,
        data: await regenerateWebhookSecret(deps, callerUser(req).id, params.id),
      },
    }),
    resetProject: async ({ req, params }) => ({
      status: 200,
      body: { success: true, deleted: await resetProject(deps, callerUser(req).id, params.id) },
    }),
    security: security(deps),
  });
};

export const createProjectsRouter = (deps: AppDeps) => {
  return s.router(contract.projects, {
    setupState: async ({ req, params }) => ({
      status: 200,
      body: await memberSetupState(deps, callerUser(req).id, params.id),
    }),
    security: security(deps),
    resumeCampaigns: async ({ req, params }) => ({
      status: 200,
      body: await resumePausedCampaigns(deps, callerUser(req).id, params.id),
    }),
    listMembers: async ({ req, params }) => ({
      status: 200,
      body: await members.listMembers(deps.db.pool, callerUser(req).id, params.id),
    }),
    inviteMember: async ({ req, params, body }) => ({
      status: 201,
      body: await members.inviteMember(deps, callerUser(req).id, params.id, body.email, body.role),
    }),
    updateMember: async ({ req, params, body }) => ({
      status: 200,
      body: await members.updateMemberRole(deps.db.pool, callerUser(req).id, params.id, params.userId, body.role),
    }),
    removeMember: async ({ req, params }) => ({
      status: 200,
      body: await members.removeMember(deps.db.pool, callerUser(req).id, params.id, params.userId),
    }),
  });
};
