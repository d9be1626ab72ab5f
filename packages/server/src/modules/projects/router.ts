import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { Request } from 'express';
import type { AppDeps } from '../../deps.js';
import { callerAccess, callerMember, callerUser } from '../../kit/caller.js';
import { toUserDto } from '../accounts/public.js';
import { resumePausedCampaigns, securityState, setupState } from './insights.js';
import * as members from './members.js';
import { resetProject } from './project-data.js';
import * as projects from './service.js';
import { regenerateWebhookSecret } from './webhook-secret.js';

const s = initServer();

/** `GET /users/@me/projects/:id/security` and `GET /projects/:id/security`: one handler, two paths. */
const security =
  (deps: AppDeps) =>
  async ({ req }: { req: Request }) => ({
    status: 200 as const,
    body: await securityState(deps, callerAccess(req).project),
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
    updateProject: async ({ req, body }) => ({
      status: 200,
      body: await projects.updateProject(deps, callerAccess(req), body),
    }),
    deleteProject: async ({ req }) => {
      await projects.deleteProject(deps.db.pool, callerAccess(req).project.id);
      return { status: 204, body: undefined };
    },
    regenerateKeys: async ({ req }) => ({
      status: 200,
      body: await projects.regenerateKeys(deps.db.pool, callerAccess(req)),
    }),
    rotateWebhookSecret: async ({ req }) => ({
      status: 200,
      body: { success: true, data: await regenerateWebhookSecret(deps, callerAccess(req).project) },
    }),
    resetProject: async ({ req }) => ({
      status: 200,
      body: { success: true, deleted: await resetProject(deps, callerAccess(req).project) },
    }),
    security: security(deps),
  });
};

export const createProjectsRouter = (deps: AppDeps) => {
  return s.router(contract.projects, {
    setupState: async ({ req }) => ({
      status: 200,
      body: await setupState(deps.db.pool, callerAccess(req).project.id),
    }),
    security: security(deps),
    resumeCampaigns: async ({ req }) => ({
      status: 200,
      body: await resumePausedCampaigns(deps, callerAccess(req).project),
    }),
    listMembers: async ({ req }) => ({
      status: 200,
      body: await members.listMembers(deps.db.pool, callerAccess(req).project.id),
    }),
    inviteMember: async ({ req, body }) => ({
      status: 201,
      body: await members.inviteMember(deps, callerMember(req), body.email, body.role),
    }),
    updateMember: async ({ req, params, body }) => ({
      status: 200,
      body: await members.updateMemberRole(deps.db.pool, callerMember(req), params.userId, body.role),
    }),
    removeMember: async ({ req, params }) => ({
      status: 200,
      body: await members.removeMember(deps.db.pool, callerMember(req), params.userId),
    }),
  });
};
