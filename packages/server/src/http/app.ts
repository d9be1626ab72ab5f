import { contract } from '@pigeon/contract';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { AppDeps } from '../deps.js';
import { createActivityRouter } from '../modules/activity/router.js';
import { createAnalyticsRouter } from '../modules/analytics/router.js';
import { loginPageRouter } from '../modules/auth/login-page.js';
import { createAuthRouter } from '../modules/auth/router.js';
import { createCampaignsRouter } from '../modules/campaigns/router.js';
import { createContactsRouter } from '../modules/contacts/router.js';
import { createDomainsRouter } from '../modules/domains/router.js';
import { createEmailsRouter } from '../modules/emails/router.js';
import { engagementRouter } from '../modules/engagement/router.js';
import { createEventsRouter } from '../modules/events/router.js';
import { outboxRouter } from '../modules/outbox/router.js';
import { createProjectsRouter, createUsersRouter } from '../modules/projects/router.js';
import { createSegmentsRouter } from '../modules/segments/router.js';
import { createSystemRouter } from '../modules/system/router.js';
import { createTemplatesRouter } from '../modules/templates/router.js';
import { createUploadsRouter, imagesRouter } from '../modules/uploads/router.js';
import { createImageStorage } from '../modules/uploads/storage.js';
import { createWorkflowsRouter } from '../modules/workflows/router.js';
import { authenticate } from './auth.js';
import { docsRouter } from './docs.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { requestId } from './request-id.js';
import { csvUpload } from './uploads.js';
import { refuseUnsafeInput, requestValidationErrorHandler } from './validation.js';

/** Spec §8: whole message at most 40 MB; base64 attachments add a third. */
const SEND_BODY_LIMIT = '56mb';
const DEFAULT_BODY_LIMIT = '1mb';

/** Builds the HTTP app. Never listens: `main.ts` or a test does. */
export function createApp(
  deps: AppDeps,
  options: { mountExtraRoutes?: (app: Express, deps: AppDeps) => void } = {},
): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.use(requestId);
  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: (req) => (req as express.Request).requestId,
      autoLogging: { ignore: (req) => req.url === '/health' },
      // One small line per request: full header dumps cost real CPU at thousands of requests/s.
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );
  app.use('/v1/send', express.json({ limit: SEND_BODY_LIMIT }));
  app.use(express.json({ limit: DEFAULT_BODY_LIMIT }));
  app.post('/contacts/import', csvUpload);
  app.use(docsRouter(deps.config.http.publicUrl));
  // Pigeon's own pages: reached from emails and browsers, outside the API contract.
  app.use(engagementRouter(deps));
  const images = createImageStorage(deps.config.uploads);
  app.use(imagesRouter(deps, images));
  app.use(loginPageRouter(deps));
  if (deps.mailer.kind === 'outbox') app.use(outboxRouter(deps));

  const s = initServer();
  const router = s.router(contract, {
    system: createSystemRouter(deps),
    auth: createAuthRouter(deps),
    users: createUsersRouter(deps),
    projects: createProjectsRouter(deps),
    contacts: createContactsRouter(deps),
    events: createEventsRouter(deps),
    domains: createDomainsRouter(deps),
    templates: createTemplatesRouter(deps),
    emails: createEmailsRouter(deps),
    activity: createActivityRouter(deps),
    analytics: createAnalyticsRouter(deps),
    segments: createSegmentsRouter(deps),
    campaigns: createCampaignsRouter(deps),
    workflows: createWorkflowsRouter(deps),
    uploads: createUploadsRouter(deps, images),
  });
  createExpressEndpoints(contract, router, app, {
    requestValidationErrorHandler,
    globalMiddleware: [authenticate(deps), refuseUnsafeInput],
    responseValidation: deps.validateResponses ?? false,
    logInitialization: false,
  });

  options.mountExtraRoutes?.(app, deps);
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
