import { PERMISSIONS, permits, type Role, type TrackingMode } from '@pigeon/contract';
import { raw } from '../../db/query.js';

/** Secret keys are shown to the roles that manage the project (OWNER and ADMIN, DESIGN §3); a MEMBER sees the public key. */
export const SECRET_KEY_ROLES = PERMISSIONS['project.manage'];
export const seesSecretKey = (role: Role) => permits('project.manage', role);

/** A `projects` row as the services use it (`PROJECT_COLUMNS` selects it). */
export interface Project {
  id: string;
  name: string;
  publicKey: string;
  secretKey: string;
  disabled: boolean;
  disabledReason: string | null;
  trackingMode: TrackingMode;
  subscribedRedirectUrl: string | null;
  unsubscribedRedirectUrl: string | null;
  unsubscribeMailbox: string | null;
  campaignSendRate: number | null;
  defaultFrom: string | null;
  retentionEventsDays: number;
  retentionContentDays: number;
  retentionEmailsDays: number;
  relayRouteTransactional: string[] | null;
  relayRouteCampaign: string[] | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The columns of a `Project`, from a table aliased `p`. */
export const PROJECT_COLUMNS = raw(`p.id, p.name, p.public_key AS "publicKey", p.secret_key AS "secretKey",
  p.disabled, p.disabled_reason AS "disabledReason", p.tracking_mode AS "trackingMode",
  p.subscribed_redirect_url AS "subscribedRedirectUrl", p.unsubscribed_redirect_url AS "unsubscribedRedirectUrl",
  p.unsubscribe_mailbox AS "unsubscribeMailbox", p.campaign_send_rate AS "campaignSendRate",
  p.default_from AS "defaultFrom", p.retention_events_days AS "retentionEventsDays",
  p.retention_content_days AS "retentionContentDays", p.retention_emails_days AS "retentionEmailsDays",
  p.relay_route_transactional AS "relayRouteTransactional", p.relay_route_campaign AS "relayRouteCampaign",
  p.created_at AS "createdAt", p.updated_at AS "updatedAt"`);

/** A `memberships` row. */
export interface Membership {
  projectId: string;
  userId: string;
  role: Role;
  /** Could read the current secret key (OWNER or ADMIN since the last rotation). */
  sawSecretKey: boolean;
  createdAt: Date;
}

/** A pending or accepted invitation (`invitations`). */
export interface Invitation {
  id: string;
  projectId: string;
  email: string;
  role: Role;
  expiresAt: Date;
  acceptedAt: Date | null;
  createdAt: Date;
}

/** The columns of an `Invitation`, from a table aliased `i`. */
export const INVITATION_COLUMNS = raw(
  `i.id, i.project_id AS "projectId", i.email, i.role, i.expires_at AS "expiresAt", i.accepted_at AS "acceptedAt", i.created_at AS "createdAt"`,
);
