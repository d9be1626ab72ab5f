import { resendContract } from '@pigeon/contract/compat';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { type Caller, callerProject, type ProjectRef } from '../../kit/caller.js';
import { idempotency } from '../idempotency/public.js';
import { requireAudience, toAudience } from './contacts.js';
import * as resend from './service.js';

const s = initServer();

type Req = { caller: Caller };

/** The caller's project, when `audienceId` (if given) names it: a project is one audience. */
function audienced(req: Req, audienceId?: string): ProjectRef {
  const project = callerProject(req);
  requireAudience(project, audienceId);
  return project;
}

const listOf = <T>(data: T[]) => ({ object: 'list' as const, has_more: false, data });

const audienceItem = (project: ProjectRef) => {
  const { object: _, ...item } = toAudience(project, 'audience');
  return item;
};

/** Resend's wire format under `/resend`: each route maps its input, calls one service function, answers. */
export const createResendRouter = (deps: AppDeps) => {
  const db = deps.db.pool;

  /** The same five contact routes, under `/resend/contacts` and `/resend/audiences/:audienceId/contacts`. */
  const contactRoutes = () => ({
    create: async ({ req, params, body }: { req: Req; params?: { audienceId?: string }; body: CreateBody }) => ({
      status: 201 as const,
      body: await resend.createResendContact(db, audienced(req, params?.audienceId).id, body),
    }),
    list: async ({ req, params, query }: { req: Req; params?: { audienceId?: string }; query: { limit: number } }) => ({
      status: 200 as const,
      body: await resend.listResendContacts(db, audienced(req, params?.audienceId).id, query.limit),
    }),
    get: async ({ req, params }: { req: Req; params: { id: string; audienceId?: string } }) => ({
      status: 200 as const,
      body: await resend.getResendContact(db, audienced(req, params.audienceId).id, params.id),
    }),
    update: async ({
      req,
      params,
      body,
    }: {
      req: Req;
      params: { id: string; audienceId?: string };
      body: UpdateBody;
    }) => ({
      status: 200 as const,
      body: await resend.updateResendContact(db, audienced(req, params.audienceId).id, params.id, body),
    }),
    remove: async ({ req, params }: { req: Req; params: { id: string; audienceId?: string } }) => ({
      status: 200 as const,
      body: await resend.removeResendContact(db, audienced(req, params.audienceId).id, params.id),
    }),
  });

  return s.router(resendContract, {
    emails: {
      batch: {
        middleware: [idempotency(deps)],
        handler: async ({ req, body }) => ({
          status: 200,
          body: await resend.sendResendBatch(deps, callerProject(req).id, body),
        }),
      },
      send: {
        middleware: [idempotency(deps)],
        handler: async ({ req, body }) => ({
          status: 200,
          body: await resend.sendResendEmail(deps, callerProject(req).id, body),
        }),
      },
      get: async ({ req, params }) => ({
        status: 200,
        body: await resend.getResendEmail(db, callerProject(req).id, params.id),
      }),
      update: async ({ req, params, body }) => ({
        status: 200,
        body: await resend.rescheduleResendEmail(
          db,
          callerProject(req).id,
          params.id,
          body.scheduled_at,
          deps.clock.now(),
        ),
      }),
      cancel: async ({ req, params }) => ({
        status: 200,
        body: await resend.cancelResendEmail(db, callerProject(req).id, params.id),
      }),
    },
    domains: {
      list: async ({ req }) => ({
        status: 200,
        body: listOf(await resend.listResendDomains(deps, callerProject(req).id)),
      }),
      get: async ({ req, params }) => ({
        status: 200,
        body: await resend.getResendDomain(deps, callerProject(req).id, params.id),
      }),
    },
    audiences: {
      list: async ({ req }) => ({ status: 200, body: listOf([audienceItem(callerProject(req))]) }),
      get: async ({ req, params }) => ({ status: 200, body: toAudience(audienced(req, params.id), 'audience') }),
      listSegments: async ({ req }) => ({ status: 200, body: listOf([audienceItem(callerProject(req))]) }),
      getSegment: async ({ req, params }) => ({ status: 200, body: toAudience(audienced(req, params.id), 'segment') }),
      segmentContacts: async ({ req, params, query }) => ({
        status: 200,
        body: await resend.listResendContacts(db, audienced(req, params.audienceId).id, query.limit),
      }),
    },
    contacts: contactRoutes(),
    audienceContacts: contactRoutes(),
  });
};

type CreateBody = Parameters<typeof resend.createResendContact>[2];
type UpdateBody = Parameters<typeof resend.updateResendContact>[3];
