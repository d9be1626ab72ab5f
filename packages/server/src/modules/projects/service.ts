import type { EntityManager } from '@mikro-orm/postgresql';
import { type Retention, Role, type TrackingMode } from '@pigeon/contract';
import { uuidv7 } from 'uuidv7';
import type { AppDeps } from '../../deps.js';
import { forbidden, notFound } from '../../http/errors.js';
import { requireVerifiedSender } from '../domains/service.js';
import { generateKeyPair } from './keys.js';
import { findMembership } from './membership.js';
import {
  type Membership,
  MembershipSchema,
  type Project,
  ProjectSchema,
  ProjectSuspensionSchema,
  seesSecretKey,
} from './project.entity.js';

export const MANAGERS: Role[] = ['OWNER', 'ADMIN'];

export interface ProjectSettings {
  name?: string;
  trackingMode?: TrackingMode;
  subscribedRedirectUrl?: string | null;
  unsubscribedRedirectUrl?: string | null;
  unsubscribeMailbox?: string | null;
  campaignSendRate?: number | null;
  defaultFrom?: string | null;
  retention?: Partial<Retention>;
}

export const toProjectDto = (project: Project, role: Role) => ({
  id: project.id,
  name: project.name,
  publicKey: project.publicKey,
  secretKey: seesSecretKey(role) ? project.secretKey : null,
  role,
  disabled: project.disabled,
  disabledReason: project.disabledReason ?? null,
  trackingMode: project.trackingMode,
  subscribedRedirectUrl: project.subscribedRedirectUrl ?? null,
  unsubscribedRedirectUrl: project.unsubscribedRedirectUrl ?? null,
  unsubscribeMailbox: project.unsubscribeMailbox ?? null,
  campaignSendRate: project.campaignSendRate ?? null,
  defaultFrom: project.defaultFrom ?? null,
  retention: {
    eventsDays: project.retentionEventsDays,
    contentDays: project.retentionContentDays,
    emailsDays: project.retentionEmailsDays,
  },
  createdAt: project.createdAt.toISOString(),
  updatedAt: project.updatedAt.toISOString(),
});

export async function createProject(em: EntityManager, ownerId: string, name: string): Promise<Project> {
  return em.transactional(async (tx) => {
    const project = tx.create(ProjectSchema, { id: uuidv7(), name, ...generateKeyPair() });
    await tx.flush(); // memberships reference the project row; ids are plain columns, not ORM relations
    tx.create(MembershipSchema, { projectId: project.id, userId: ownerId, role: 'OWNER' });
    return project;
  });
}

export async function listProjects(em: EntityManager, userId: string) {
  const memberships = await em.find(MembershipSchema, { userId }, { orderBy: { createdAt: 'asc' } });
  const projects = await em.find(ProjectSchema, { id: { $in: memberships.map((m) => m.projectId) } });
  const byId = new Map(projects.map((p) => [p.id, p]));
  return memberships.flatMap((m) => {
    const project = byId.get(m.projectId);
    return project ? [toProjectDto(project, m.role)] : [];
  });
}

/**
 * The caller's membership of a project, checked against the roles an action needs. Not a member
 * (or no such project) is 404; a member without the role is 403.
 */
export async function requireMembership(
  em: EntityManager,
  userId: string,
  projectId: string,
  roles: readonly Role[] = Role.options,
): Promise<{ project: Project; membership: Membership }> {
  const found = await findMembership(em, projectId, userId);
  if (!found) throw notFound('Project');
  const { project, membership } = found;
  if (!roles.includes(membership.role)) {
    throw forbidden(`This needs the ${roles.join(' or ')} role in the project`, 'INSUFFICIENT_ROLE');
  }
  return { project, membership };
}

export function refuseIfDisabled(project: Project): void {
  if (project.disabled) {
    throw forbidden('This project is disabled; it can read but not write', 'PROJECT_DISABLED', {
      details: { reason: project.disabledReason },
    });
  }
}

export async function updateProject(
  deps: Pick<AppDeps, 'db'>,
  userId: string,
  projectId: string,
  changes: ProjectSettings,
) {
  const em = deps.db.orm.em.fork();
  const { project, membership } = await requireMembership(em, userId, projectId, MANAGERS);
  refuseIfDisabled(project);
  // The same 403 as a template's sender: a default sender must be on a domain verified for the project.
  if (changes.defaultFrom) await requireVerifiedSender(deps.db.pool, projectId, changes.defaultFrom);
  const { retention, ...settings } = changes;
  em.assign(project, {
    ...settings,
    ...(retention?.eventsDays !== undefined && { retentionEventsDays: retention.eventsDays }),
    ...(retention?.contentDays !== undefined && { retentionContentDays: retention.contentDays }),
    ...(retention?.emailsDays !== undefined && { retentionEmailsDays: retention.emailsDays }),
  });
  await em.flush();
  return toProjectDto(project, membership.role);
}

export async function deleteProject(em: EntityManager, userId: string, projectId: string): Promise<void> {
  const { project } = await requireMembership(em, userId, projectId, ['OWNER']);
  await em.remove(project).flush();
}

/**
 * Both keys change in one UPDATE: every process looks keys up per request, so the old ones die at
 * once. Members who are not OWNER or ADMIN have not seen the new secret key.
 */
export async function regenerateKeys(em: EntityManager, userId: string, projectId: string) {
  return em.transactional(async (tx) => {
    const { project, membership } = await requireMembership(tx, userId, projectId, MANAGERS);
    refuseIfDisabled(project);
    tx.assign(project, generateKeyPair());
    await tx.flush();
    await tx.nativeUpdate(MembershipSchema, { projectId, role: 'MEMBER' }, { sawSecretKey: false });
    return toProjectDto(project, membership.role);
  });
}

/** Disabling is an operator action (`pigeon project disable`), recorded as a suspension. */
export async function setProjectDisabled(em: EntityManager, projectId: string, reason: string | null) {
  const project = await em.findOne(ProjectSchema, { id: projectId });
  if (!project) throw notFound('Project');
  project.disabled = reason !== null;
  project.disabledReason = reason;
  if (reason !== null) em.create(ProjectSuspensionSchema, { id: uuidv7(), projectId, reason });
  await em.flush(); // one transaction: the flag and its suspension row
  return project;
}
