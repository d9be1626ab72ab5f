import { contract } from '@pigeon/contract';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import express, { type Express } from 'express';
import type { AppDeps } from '../deps.js';
import { requestValidationErrorHandler } from '../kit/validation.js';
import { httpMetrics } from '../metrics/http.js';
import { createActivityRouter } from '../modules/activity/router.js';
import { createAnalyticsRouter } from '../modules/analytics/router.js';
import { createBillingRouter } from '../modules/billing/router.js';
import { createCampaignsRouter } from '../modules/campaigns/router.js';
import { createContactsRouter } from '../modules/contacts/router.js';
import { createSuppressionsRouter } from '../modules/deliverability/router.js';
import { createDmarcReportsRouter } from '../modules/dmarc-reports/router.js';
import { createDomainsRouter } from '../modules/domains/router.js';
import { createTrackingDomainsRouter } from '../modules/domains/tracking-router.js';
import { createEmailResourceRouter } from '../modules/emails/resource-router.js';
import { createEmailsRouter } from '../modules/emails/router.js';
import { engagementRouter } from '../modules/engagement/router.js';
import { createWebhookEndpointsRouter } from '../modules/event-webhooks/router.js';
import { createEventsRouter } from '../modules/events/router.js';
import { createTracker, type TrackEvent } from '../modules/events/track.js';
import { createInboundRoutesRouter, inboundAttachmentsRouter } from '../modules/inbound-routes/router.js';
import { createInboundWebhooksRouter } from '../modules/inbound-webhooks/router.js';
import { mcpRouter } from '../modules/mcp/router.js';
import { outboxRouter } from '../modules/outbox/router.js';
import { createProjectsRouter, createUsersRouter } from '../modules/projects/router.js';
import { createSegmentsRouter } from '../modules/segments/router.js';
import { createSenderCheckRouter } from '../modules/sender-check/router.js';
import { loginPageRouter } from '../modules/sign-in/login-page.js';
import { createAuthRouter } from '../modules/sign-in/router.js';
import { ssoRouter } from '../modules/sso/router.js';
import { createSystemRouter } from '../modules/system/router.js';
import { createTemplatesRouter } from '../modules/templates/router.js';
import { createTopicsRouter } from '../modules/topics/router.js';
import { createUploadsRouter, imagesRouter } from '../modules/uploads/router.js';
import { createImageStorage } from '../modules/uploads/storage.js';
import { createVerifyRouter } from '../modules/verify/router.js';
import { createWorkflowsRouter } from '../modules/workflows/router.js';
import { mountCompatEndpoints, mountCompatErrorHandlers } from './compat.js';
import { consoleRouter, defaultConsoleDir } from './console.js';
import { contractMiddleware } from './contract-middleware.js';
import { docsRouter } from './docs.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { requestId } from './request-id.js';
import { requestLog } from './request-log.js';

export interface AppOptions {
  /** The process's tracker, shared with the bare track route (`http/fast-routes.ts`); default: one of its own. */
  trackEvent?: TrackEvent;
  mountExtraRoutes?: (app: Express, deps: AppDeps) => void;
}

/** Builds the HTTP app. Never listens: `main.ts` or a test does. */
export function createApp(deps: AppDeps, options: AppOptions = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.http.trustProxy);
  // API answers are per request; hashing every body for an ETag nobody revalidates costs CPU on
  // every response. Static assets (/docs/assets) keep theirs (serve-static sets its own).
  app.set('etag', false);
  app.use(requestId);
  // Off unless METRICS_PORT is set: without it, requests pay nothing for metrics.
  if (deps.config.metrics.port !== undefined) app.use(httpMetrics());
  app.use(requestLog(deps.logger));

  const images = createImageStorage(deps.config.uploads);
  const s = initServer();
  // Routes are matched in the order they are registered, which is this object's key order: the
  // hot ones (health, track, send) first, so they do not walk a hundred routes' patterns.
  const router = s.router(contract, {
    system: createSystemRouter(deps),
    events: createEventsRouter(deps, options.trackEvent ?? createTracker(deps)),
    emails: createEmailsRouter(deps),
    auth: createAuthRouter(deps),
    users: createUsersRouter(deps),
    projects: createProjectsRouter(deps),
    contacts: createContactsRouter(deps),
    dmarcReports: createDmarcReportsRouter(deps),
    domains: createDomainsRouter(deps),
    trackingDomains: createTrackingDomainsRouter(deps),
    senderCheck: createSenderCheckRouter(deps),
    templates: createTemplatesRouter(deps),
    activity: createActivityRouter(deps),
    analytics: createAnalyticsRouter(deps),
    segments: createSegmentsRouter(deps),
    campaigns: createCampaignsRouter(deps),
    workflows: createWorkflowsRouter(deps),
    verify: createVerifyRouter(deps),
    suppressions: createSuppressionsRouter(deps),
    billing: createBillingRouter(deps),
    inboundWebhooks: createInboundWebhooksRouter(deps),
    uploads: createUploadsRouter(deps, images),
    sentEmails: createEmailResourceRouter(deps),
    webhookEndpoints: createWebhookEndpointsRouter(deps),
    inboundRoutes: createInboundRoutesRouter(deps),
    topics: createTopicsRouter(deps),
  });
  createExpressEndpoints(contract, router, app, {
    requestValidationErrorHandler,
    globalMiddleware: contractMiddleware(deps),
    responseValidation: deps.validateResponses ?? false,
    logInitialization: false,
  });
  mountCompatEndpoints(app, deps, contractMiddleware(deps));

  // After the API: a request for an API route does not walk the pages' and docs' routes first (the
  // open pixel, the click redirect and keyed tracks never reach express: fast-routes.ts).
  app.use(engagementRouter(deps));
  // POST /mcp: the contract's key operations as MCP tools, each calling the API above over HTTP.
  app.use(mcpRouter(deps));
  // Uploaded images, fetched by mail clients from inside emails.
  app.use(imagesRouter(deps, images));
  // Attachments of received mail, behind signed links.
  app.use(inboundAttachmentsRouter(deps));
  app.use(docsRouter(deps.config.http.publicUrl));
  app.use(consoleRouter(deps.config.http.consoleDir ?? defaultConsoleDir()));
  app.use(loginPageRouter(deps));
  app.use(ssoRouter(deps));
  if (deps.mailer.kind === 'outbox') app.use(outboxRouter(deps));
  options.mountExtraRoutes?.(app, deps);
  app.use(notFoundHandler);
  mountCompatErrorHandlers(app, deps);
  app.use(errorHandler(deps.logger));
  return app;
}
