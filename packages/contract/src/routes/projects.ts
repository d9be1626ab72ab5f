import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { Role } from '../permissions.js';
import { Email, User } from './auth.js';
import { MailTransportStatus, RelayRoutes } from './mail-transport.js';

const c = initContract();

export const TrackingMode = z.enum(['ENABLED', 'DISABLED', 'MARKETING_ONLY']);
export type TrackingMode = z.infer<typeof TrackingMode>;

/** Defaults of a new project's retention (DESIGN.md §9; README "History and retention"). */
export const RETENTION_DEFAULTS = { eventsDays: 400, contentDays: 30, emailsDays: 400 } as const;
const retentionDays = (what: string, defaultDays: number) =>
  z.number().int().min(1).max(3650).describe(`${what}, in days (1 to 3650; default ${defaultDays})`);
export const Retention = z.object({
  eventsDays: retentionDays(
    "How long raw events are kept, and a finished workflow execution's context and step runs, and finished event webhook deliveries (their payloads copy events; 30 days at most), and DMARC aggregate reports. Analytics counts, campaign stats, contacts and suppressions outlive them",
    RETENTION_DEFAULTS.eventsDays,
  ),
  contentDays: retentionDays(
    "How long a sent message's content (HTML, text, headers, attachments) is kept; its metadata stays as long as the email",
    RETENTION_DEFAULTS.contentDays,
  ),
  emailsDays: retentionDays(
    'How long email rows (metadata: addresses, status, times) are kept',
    RETENTION_DEFAULTS.emailsDays,
  ),
});
export type Retention = z.infer<typeof Retention>;

const projectObject = z.object({
  id: z.string().uuid(),
  name: z.string(),
  publicKey: z.string().describe('`pk_…`: may only call POST /v1/track'),
  secretKey: z
    .string()
    .nullable()
    .describe('`sk_…`: every endpoint; keep it server-side. Shown to OWNER and ADMIN only; null for a MEMBER'),
  role: Role.describe("The caller's role in the project"),
  disabled: z.boolean(),
  disabledReason: z.string().nullable(),
  trackingMode: TrackingMode.describe(
    'Open and click tracking: ENABLED (all mail), DISABLED, or MARKETING_ONLY. `/v1/send` can override it per send with `tracking`.',
  ),
  subscribedRedirectUrl: z
    .string()
    .nullable()
    .describe(
      "Where the subscribe link and the preferences page send a contact who subscribed; null shows Pigeon's page",
    ),
  unsubscribedRedirectUrl: z
    .string()
    .nullable()
    .describe("Where the unsubscribe and preferences pages send a contact who unsubscribed; null shows Pigeon's page"),
  unsubscribeMailbox: z
    .string()
    .nullable()
    .describe(
      'Mailbox named as the `mailto:` alternative in List-Unsubscribe headers; null leaves only the one-click URL',
    ),
  campaignSendRate: z
    .number()
    .nullable()
    .describe('Campaign messages per second for this project (warming up a new domain); null: as fast as possible'),
  defaultFrom: z
    .string()
    .nullable()
    .describe(
      'Sender address `/v1/send` uses when neither the request nor its template names one (on a verified domain); null: `from` is required',
    ),
  retention: Retention.describe('How long history is kept; older rows are removed by the retention job'),
  relayRoutes: RelayRoutes.describe(
    "The project's own relay route per stream (names from GET /config `relays`); null: the installation's",
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
type ProjectObject = typeof projectObject;
/** `Project` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface ProjectSchema extends ProjectObject {}
export const Project: ProjectSchema = projectObject;

const RedirectUrl = z
  .string()
  .url()
  .max(2000)
  .regex(/^https?:\/\//i, 'must be an http(s) URL');

export const ProjectKeys = z.object({ publicKey: z.string(), secretKey: z.string() });

export const WebhookSecret = z.object({
  secret: z
    .string()
    .regex(/^whsec_/)
    .describe(
      "`whsec_…` (Standard Webhooks): verify the `webhook-signature` of Pigeon's webhooks with it. Shown only here",
    ),
  createdAt: Timestamp,
  previousSecretExpiresAt: Timestamp.nullable().describe(
    'Until then deliveries carry a second signature made with the replaced secret; null when there was none',
  ),
});

export const Member = z.object({
  userId: z.string().uuid(),
  email: z.string().email(),
  role: Role,
  joinedAt: Timestamp,
});

export const Invitation = z.object({
  id: z.string().uuid(),
  email: z.string().email(),
  role: Role,
  expiresAt: Timestamp,
  createdAt: Timestamp,
});

export const MemberRemoved = z.object({
  removed: Member,
  sawSecretKey: z
    .boolean()
    .describe(
      'Whether the removed member could see the current secret key (an OWNER or ADMIN since the last key rotation). If so, they may still hold it: rotate the keys',
    ),
  suggestion: z.string().optional().describe('What to do next, when there is something to do'),
});

export const Members = z.object({ members: z.array(Member), invitations: z.array(Invitation) });
export const InviteResult = z.discriminatedUnion('status', [
  z.object({ status: z.literal('added'), member: Member }),
  z.object({ status: z.literal('invited'), invitation: Invitation }),
]);

export const SetupStepId = z.enum(['verify_domain', 'send_first_email', 'track_first_event', 'add_contacts']);
export type SetupStepId = z.infer<typeof SetupStepId>;

export const SetupState = z.object({
  steps: z.array(
    z.object({
      id: SetupStepId,
      done: z.boolean(),
      title: z.string(),
    }),
  ),
  completed: z.boolean(),
});

const securityStateObject = z.object({
  windowDays: z.number().int(),
  emailsSent: z.number().int(),
  bounces: z.number().int(),
  complaints: z.number().int(),
  bounceRate: z.number().describe('bounces / emailsSent over the window; 0 when nothing was sent'),
  complaintRate: z.number(),
  disabled: z.boolean(),
  disabledReason: z.string().nullable(),
  recentSuspensions: z.array(z.object({ at: Timestamp, reason: z.string() })),
  mailTransport: MailTransportStatus,
  health: z
    .object({
      sample: z.number().int().describe('Messages in the rolling window: the last `windowSize` sent'),
      windowSize: z.number().int(),
      bounceRate: z.number().describe('Hard and soft bounces / sample'),
      complaintRate: z.number(),
      bounceThreshold: z.number().describe('Campaigns pause above this bounce rate'),
      complaintThreshold: z.number().describe('Campaigns pause above this complaint rate'),
      minimumSample: z.number().int().describe('Rates are judged only once the window holds this many messages'),
      campaignsPaused: z.boolean().describe('Campaign sending is paused; transactional mail keeps flowing'),
      pausedAt: Timestamp.nullable(),
      pausedReason: z.string().nullable(),
    })
    .describe(
      'Deliverability health over the last messages; above a threshold campaigns pause and the owners are told',
    ),
});
type SecurityStateObject = typeof securityStateObject;
/** `SecurityState` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface SecurityStateSchema extends SecurityStateObject {}
export const SecurityState: SecurityStateSchema = securityStateObject;

const ProjectId = z.object({ id: z.string().uuid() });
const MemberPath = z.object({ id: z.string().uuid(), userId: z.string().uuid() });
const forbidden = { 403: ErrorEnvelope, 404: ErrorEnvelope };

export const usersContract = c.router(
  {
    me: {
      method: 'GET',
      path: '/users/@me',
      summary: 'The signed-in user',
      metadata: meta({ auth: 'session', permission: 'account' }),
      responses: { 200: User, ...commonErrors },
    },
    listProjects: {
      method: 'GET',
      path: '/users/@me/projects',
      summary: "The signed-in user's projects, with keys",
      metadata: meta({ auth: 'session', permission: 'account' }),
      responses: { 200: z.array(Project), ...commonErrors },
    },
    createProject: {
      method: 'POST',
      path: '/users/@me/projects',
      summary: 'Create a project; the caller becomes its OWNER',
      metadata: meta({ auth: 'session', permission: 'account' }),
      body: z.object({ name: z.string().trim().min(1).max(100) }),
      responses: { 201: Project, ...commonErrors },
    },
    updateProject: {
      method: 'PATCH',
      path: '/users/@me/projects/:id',
      summary: 'Update project settings (OWNER or ADMIN)',
      metadata: meta({ auth: 'session', permission: 'project.manage' }),
      pathParams: ProjectId,
      body: z
        .object({
          name: z.string().trim().min(1).max(100),
          trackingMode: TrackingMode,
          subscribedRedirectUrl: RedirectUrl.nullable(),
          unsubscribedRedirectUrl: RedirectUrl.nullable(),
          unsubscribeMailbox: z.string().trim().toLowerCase().email().max(254).nullable(),
          campaignSendRate: z.number().positive().max(100_000).nullable(),
          defaultFrom: z.string().trim().toLowerCase().email().max(254).nullable(),
          retention: Retention.partial(),
          relayRoutes: RelayRoutes.partial(),
        })
        .partial()
        .refine((b) => Object.keys(b).length > 0, 'give at least one field to change'),
      responses: { 200: Project, ...forbidden, ...commonErrors },
    },
    deleteProject: {
      method: 'DELETE',
      path: '/users/@me/projects/:id',
      summary: 'Delete a project and all its data (OWNER)',
      metadata: meta({ auth: 'session', permission: 'project.own' }),
      pathParams: ProjectId,
      body: c.noBody(),
      responses: { 204: c.noBody(), ...forbidden, ...commonErrors },
    },
    regenerateKeys: {
      method: 'POST',
      path: '/users/@me/projects/:id/regenerate-keys',
      summary: 'Replace both API keys at once (OWNER or ADMIN); old keys stop working immediately',
      metadata: meta({ auth: 'session', permission: 'project.manage' }),
      pathParams: ProjectId,
      body: c.noBody(),
      responses: { 200: Project, ...forbidden, ...commonErrors },
    },
    rotateWebhookSecret: {
      method: 'POST',
      path: '/users/@me/projects/:id/webhook-secret',
      summary:
        'Create or rotate the webhook signing secret (OWNER or ADMIN); the only time it is shown. The previous one keeps signing for 24 hours',
      metadata: meta({ auth: 'session', permission: 'project.manage' }),
      pathParams: ProjectId,
      body: c.noBody(),
      responses: {
        200: z.object({ success: z.literal(true), data: WebhookSecret }),
        ...forbidden,
        ...commonErrors,
      },
    },
    resetProject: {
      method: 'POST',
      path: '/users/@me/projects/:id/reset',
      summary: "Wipe the project's data (irreversible; OWNER); keeps the project, members and keys",
      metadata: meta({ auth: 'session', permission: 'project.own' }),
      pathParams: ProjectId,
      body: c.noBody(),
      responses: {
        200: z.object({ success: z.literal(true), deleted: z.record(z.number().int()) }),
        ...forbidden,
        ...commonErrors,
      },
    },
    security: {
      method: 'GET',
      path: '/users/@me/projects/:id/security',
      summary: 'Bounce and complaint rates and recent suspensions',
      metadata: meta({ auth: 'session', permission: 'project.use' }),
      pathParams: ProjectId,
      responses: { 200: SecurityState, ...forbidden, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const projectsContract = c.router(
  {
    setupState: {
      method: 'GET',
      path: '/projects/:id/setup-state',
      summary: 'What a new project still has to do',
      metadata: meta({ auth: 'session', permission: 'project.use' }),
      pathParams: ProjectId,
      responses: { 200: SetupState, ...forbidden, ...commonErrors },
    },
    security: {
      method: 'GET',
      path: '/projects/:id/security',
      summary: 'Bounce and complaint rates and recent suspensions',
      metadata: meta({ auth: 'session', permission: 'project.use' }),
      pathParams: ProjectId,
      responses: { 200: SecurityState, ...forbidden, ...commonErrors },
    },
    resumeCampaigns: {
      method: 'POST',
      path: '/projects/:id/security/resume-campaigns',
      summary:
        'Lift a campaign pause set by the deliverability thresholds (OWNER or ADMIN): held campaign mail goes out again',
      metadata: meta({ auth: 'session', permission: 'project.manage' }),
      pathParams: ProjectId,
      body: c.noBody(),
      responses: { 200: SecurityState, ...forbidden, ...commonErrors },
    },
    listMembers: {
      method: 'GET',
      path: '/projects/:id/members',
      summary: 'Members and pending invitations',
      metadata: meta({ auth: 'session', permission: 'project.use' }),
      pathParams: ProjectId,
      responses: { 200: Members, ...forbidden, ...commonErrors },
    },
    inviteMember: {
      method: 'POST',
      path: '/projects/:id/members',
      summary: 'Add an existing user, or mail an invitation to an unknown address (OWNER or ADMIN)',
      metadata: meta({ auth: 'session', permission: 'project.manage' }),
      pathParams: ProjectId,
      body: z.object({ email: Email, role: Role.default('MEMBER') }),
      responses: { 201: InviteResult, 409: ErrorEnvelope, ...forbidden, ...commonErrors },
    },
    updateMember: {
      method: 'PATCH',
      path: '/projects/:id/members/:userId',
      summary: "Change a member's role (OWNER or ADMIN; only an OWNER grants or removes OWNER)",
      metadata: meta({ auth: 'session', permission: 'project.manage' }),
      pathParams: MemberPath,
      body: z.object({ role: Role }),
      responses: { 200: Member, 409: ErrorEnvelope, ...forbidden, ...commonErrors },
    },
    removeMember: {
      method: 'DELETE',
      path: '/projects/:id/members/:userId',
      summary:
        'Remove a member (OWNER or ADMIN); the last OWNER cannot be removed. Says whether they could see the secret key',
      metadata: meta({ auth: 'session', permission: 'project.manage' }),
      pathParams: MemberPath,
      body: c.noBody(),
      responses: { 200: MemberRemoved, 409: ErrorEnvelope, ...forbidden, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const projectSchemas = { Project, Member, MemberRemoved, Invitation, SetupState, SecurityState, WebhookSecret };
