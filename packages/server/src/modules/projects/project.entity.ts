import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { RETENTION_DEFAULTS, type Role, type TrackingMode } from '@pigeon/contract';

/** Secret keys are shown to OWNER and ADMIN only (DESIGN §3); a MEMBER sees the public key. */
export const seesSecretKey = (role: Role) => role === 'OWNER' || role === 'ADMIN';

export const ProjectSchema = defineEntity({
  name: 'Project',
  tableName: 'projects',
  properties: {
    id: p.uuid().primary(),
    name: p.text(),
    publicKey: p.text(),
    secretKey: p.text(),
    publicKeyHash: p.type('blob').$type<Buffer>(),
    secretKeyHash: p.type('blob').$type<Buffer>(),
    disabled: p.boolean().default(false),
    disabledReason: p.text().nullable(),
    trackingMode: p.text().$type<TrackingMode>().default('ENABLED'),
    subscribedRedirectUrl: p.text().nullable(),
    unsubscribedRedirectUrl: p.text().nullable(),
    unsubscribeMailbox: p.text().nullable(),
    campaignSendRate: p.float().nullable(),
    defaultFrom: p.text().nullable(),
    retentionEventsDays: p.integer().onCreate(() => RETENTION_DEFAULTS.eventsDays),
    retentionContentDays: p.integer().onCreate(() => RETENTION_DEFAULTS.contentDays),
    retentionEmailsDays: p.integer().onCreate(() => RETENTION_DEFAULTS.emailsDays),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
export type Project = InferEntity<typeof ProjectSchema>;

/** One row per time an operator disabled the project (`pigeon project disable`), with why. */
export const ProjectSuspensionSchema = defineEntity({
  name: 'ProjectSuspension',
  tableName: 'project_suspensions',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid(),
    reason: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export const MembershipSchema = defineEntity({
  name: 'Membership',
  tableName: 'memberships',
  properties: {
    projectId: p.uuid().primary(),
    userId: p.uuid().primary(),
    role: p.text().$type<Role>(),
    /** Could read the current secret key (OWNER or ADMIN since the last rotation). */
    sawSecretKey: p.boolean().onCreate((m: { role: Role }) => seesSecretKey(m.role)),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type Membership = InferEntity<typeof MembershipSchema>;

export const InvitationSchema = defineEntity({
  name: 'Invitation',
  tableName: 'invitations',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid(),
    email: p.text(),
    role: p.text().$type<Role>(),
    tokenHash: p.type('blob').$type<Buffer>(),
    invitedBy: p.uuid().nullable(),
    expiresAt: p.datetime(),
    acceptedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type Invitation = InferEntity<typeof InvitationSchema>;
