import { commonSchemas } from './common.js';
import { activityContract, activitySchemas } from './routes/activity.js';
import { analyticsContract, analyticsSchemas } from './routes/analytics.js';
import { authContract, authSchemas } from './routes/auth.js';
import { billingContract, billingSchemas } from './routes/billing.js';
import { campaignSchemas, campaignsContract } from './routes/campaigns.js';
import { conditionSchemas } from './routes/conditions.js';
import { contactSchemas, contactsContract } from './routes/contacts.js';
import { dmarcReportSchemas, dmarcReportsContract } from './routes/dmarc-reports.js';
import { domainsContract } from './routes/domains.js';
import { emailResourceContract, emailResourceSchemas } from './routes/email-resource.js';
import { eventSchemas, eventsContract } from './routes/events.js';
import { inboundRouteSchemas, inboundRoutesContract } from './routes/inbound-routes.js';
import { inboundWebhooksContract } from './routes/inbound-webhooks.js';
import { projectSchemas, projectsContract, usersContract } from './routes/projects.js';
import { segmentSchemas, segmentsContract } from './routes/segments.js';
import { senderCheckContract, senderCheckSchemas } from './routes/sender-check.js';
import { emailsContract, sendingSchemas } from './routes/sending.js';
import { deliverabilitySchemas, suppressionsContract } from './routes/suppressions.js';
import { systemContract, systemSchemas } from './routes/system.js';
import { templatesContract } from './routes/templates.js';
import { topicSchemas, topicsContract } from './routes/topics.js';
import { trackingDomainSchemas, trackingDomainsContract } from './routes/tracking-domains.js';
import { uploadSchemas, uploadsContract } from './routes/uploads.js';
import { verifyContract } from './routes/verify.js';
import { webhookEndpointSchemas, webhookEndpointsContract } from './routes/webhook-endpoints.js';
import { webhookEventSchemas } from './routes/webhook-events.js';
import { workflowSchemas, workflowsContract } from './routes/workflows.js';

export * from './common.js';
export * from './meta.js';
export * from './permissions.js';
export * from './routes/activity.js';
export * from './routes/analytics.js';
export * from './routes/auth.js';
export * from './routes/billing.js';
export * from './routes/campaigns.js';
export * from './routes/conditions.js';
export * from './routes/contacts.js';
export * from './routes/dmarc-reports.js';
export * from './routes/domains.js';
export * from './routes/email-resource.js';
export * from './routes/events.js';
export * from './routes/inbound-routes.js';
export * from './routes/inbound-webhooks.js';
export * from './routes/mail-transport.js';
export * from './routes/projects.js';
export * from './routes/segments.js';
export * from './routes/send-options.js';
export * from './routes/sender-check.js';
export * from './routes/sending.js';
export * from './routes/suppressions.js';
export * from './routes/system.js';
export * from './routes/templates.js';
export * from './routes/topics.js';
export * from './routes/tracking-domains.js';
export * from './routes/uploads.js';
export * from './routes/verify.js';
export * from './routes/webhook-endpoints.js';
export * from './routes/webhook-events.js';
export * from './routes/workflows.js';

/**
 * The whole wire contract of Pigeon: every endpoint, defined once. Each part is a router made
 * with `strictStatusCodes`; the whole is their plain composition, whose declared type names each
 * part instead of inlining it (an inlined type of every route exceeds what declaration files hold).
 */
// A type alias (not an interface) so it fits ts-rest's AppRouter index signature.
export type Contract = {
  system: typeof systemContract;
  auth: typeof authContract;
  users: typeof usersContract;
  projects: typeof projectsContract;
  contacts: typeof contactsContract;
  events: typeof eventsContract;
  dmarcReports: typeof dmarcReportsContract;
  domains: typeof domainsContract;
  trackingDomains: typeof trackingDomainsContract;
  senderCheck: typeof senderCheckContract;
  templates: typeof templatesContract;
  emails: typeof emailsContract;
  activity: typeof activityContract;
  analytics: typeof analyticsContract;
  segments: typeof segmentsContract;
  campaigns: typeof campaignsContract;
  workflows: typeof workflowsContract;
  verify: typeof verifyContract;
  suppressions: typeof suppressionsContract;
  billing: typeof billingContract;
  inboundWebhooks: typeof inboundWebhooksContract;
  uploads: typeof uploadsContract;
  sentEmails: typeof emailResourceContract;
  webhookEndpoints: typeof webhookEndpointsContract;
  inboundRoutes: typeof inboundRoutesContract;
  topics: typeof topicsContract;
};

export const contract: Contract = {
  system: systemContract,
  auth: authContract,
  users: usersContract,
  projects: projectsContract,
  contacts: contactsContract,
  events: eventsContract,
  dmarcReports: dmarcReportsContract,
  domains: domainsContract,
  trackingDomains: trackingDomainsContract,
  senderCheck: senderCheckContract,
  templates: templatesContract,
  emails: emailsContract,
  activity: activityContract,
  analytics: analyticsContract,
  segments: segmentsContract,
  campaigns: campaignsContract,
  workflows: workflowsContract,
  verify: verifyContract,
  suppressions: suppressionsContract,
  billing: billingContract,
  inboundWebhooks: inboundWebhooksContract,
  uploads: uploadsContract,
  sentEmails: emailResourceContract,
  webhookEndpoints: webhookEndpointsContract,
  inboundRoutes: inboundRoutesContract,
  topics: topicsContract,
};

/** Schemas that get a name under `components.schemas` in the OpenAPI document. */
export const namedSchemas = {
  ...commonSchemas,
  ...systemSchemas,
  ...authSchemas,
  ...projectSchemas,
  ...contactSchemas,
  ...eventSchemas,
  ...sendingSchemas,
  ...activitySchemas,
  ...analyticsSchemas,
  ...conditionSchemas,
  ...segmentSchemas,
  ...campaignSchemas,
  ...workflowSchemas,
  ...deliverabilitySchemas,
  ...billingSchemas,
  ...uploadSchemas,
  ...emailResourceSchemas,
  ...webhookEndpointSchemas,
  ...webhookEventSchemas,
  ...dmarcReportSchemas,
  ...inboundRouteSchemas,
  ...topicSchemas,
  ...trackingDomainSchemas,
  ...senderCheckSchemas,
};
