import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Role } from '@pigeon/contract';
import { uuidv7 } from 'uuidv7';
import type { AppDeps } from '../../deps.js';
import { AppError, conflict, forbidden, notFound } from '../../http/errors.js';
import { sendSystemMail } from '../../mail/system-mail.js';
import { UserSchema } from '../accounts/user.entity.js';
import { hashToken, newToken } from '../auth/tokens.js';
import {
  InvitationSchema,
  type Membership,
  MembershipSchema,
  type Project,
  ProjectSchema,
  seesSecretKey,
} from './project.entity.js';
import { MANAGERS, refuseIfDisabled, requireMembership } from './service.js';

const INVITATION_TTL_MS = 7 * 24 * 3600_000;

const toMemberDto = (m: Membership, email: string) => ({
  userId: m.userId,
  email,
  role: m.role,
  joinedAt: m.createdAt.toISOString(),
});

const toInvitationDto = (i: { id: string; email: string; role: Role; expiresAt: Date; createdAt: Date }) => ({
  id: i.id,
  email: i.email,
  role: i.role,
  expiresAt: i.expiresAt.toISOString(),
  createdAt: i.createdAt.toISOString(),
});

export async function listMembers(em: EntityManager, userId: string, projectId: string) {
  await requireMembership(em, userId, projectId);
  const memberships = await em.find(MembershipSchema, { projectId }, { orderBy: { createdAt: 'asc' } });
  const users = await em.find(UserSchema, { id: { $in: memberships.map((m) => m.userId) } });
  const emails = new Map(users.map((u) => [u.id, u.email]));
  const invitations = await em.find(
    InvitationSchema,
    { projectId, acceptedAt: null, expiresAt: { $gt: new Date() } },
    { orderBy: { createdAt: 'asc' } },
  );
  return {
    members: memberships.map((m) => toMemberDto(m, emails.get(m.userId) ?? '')),
    invitations: invitations.map(toInvitationDto),
  };
}

/** Only an OWNER may hand out or take away the OWNER role. */
function assertMayGrant(actorRole: Role, role: Role) {
  if (role === 'OWNER' && actorRole !== 'OWNER')
    throw forbidden('Only an OWNER can make someone an OWNER', 'INSUFFICIENT_ROLE');
}

/** An existing user is added at once; an unknown address gets a mailed invitation token. */
export async function inviteMember(deps: AppDeps, actorId: string, projectId: string, email: string, role: Role) {
  const em = deps.db.orm.em.fork();
  const { project, membership } = await requireMembership(em, actorId, projectId, MANAGERS);
  refuseIfDisabled(project);
  assertMayGrant(membership.role, role);
  const user = await em.findOne(UserSchema, { email });
  if (user) {
    if (await em.findOne(MembershipSchema, { projectId, userId: user.id }))
      throw conflict('This user is already a member');
    const added = em.create(MembershipSchema, { projectId, userId: user.id, role });
    await em.flush();
    return { status: 'added' as const, member: toMemberDto(added, user.email) };
  }
  const { token, hash } = newToken();
  const invitation = await em.transactional(async (tx) => {
    await tx.nativeDelete(InvitationSchema, { projectId, email, acceptedAt: null });
    return tx.create(InvitationSchema, {
      id: uuidv7(),
      projectId,
      email,
      role,
      tokenHash: hash,
      invitedBy: actorId,
      expiresAt: new Date(Date.now() + INVITATION_TTL_MS),
    });
  });
  await sendSystemMail(deps, email, `You are invited to ${project.name} on Pigeon`, [
    `You have been invited to join the project "${project.name}" as ${role}.`,
    `Create an account at ${deps.config.http.publicUrl} with this email address, then accept the invitation with this token (valid for 7 days):`,
    `Token: ${token}`,
  ]);
  return { status: 'invited' as const, invitation: toInvitationDto(invitation) };
}

async function countOwners(em: EntityManager, projectId: string) {
  return em.count(MembershipSchema, { projectId, role: 'OWNER' });
}

/**
 * Runs a membership change with the project row locked (`FOR UPDATE`), so changes to one
 * project's members happen one at a time and each sees the roles the previous one committed:
 * two OWNERs demoting or removing each other at once cannot leave the project without an OWNER.
 * The actor's own role is read after the lock too (it may just have been taken away).
 */
function withMembersLocked<T>(
  em: EntityManager,
  actorId: string,
  projectId: string,
  change: (tx: EntityManager, actor: Membership, project: Project) => Promise<T>,
): Promise<T> {
  return em.transactional(async (tx) => {
    await requireMembership(tx, actorId, projectId, MANAGERS); // 404 / 403 before taking the lock
    const project = await tx.findOneOrFail(
      ProjectSchema,
      { id: projectId },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    const actor = await tx.findOne(MembershipSchema, { projectId, userId: actorId }, { refresh: true });
    if (!actor || !MANAGERS.includes(actor.role)) {
      throw forbidden(`This needs the ${MANAGERS.join(' or ')} role in the project`, 'INSUFFICIENT_ROLE');
    }
    return change(tx, actor, project);
  });
}

async function lockedTarget(tx: EntityManager, projectId: string, userId: string): Promise<Membership> {
  const target = await tx.findOne(MembershipSchema, { projectId, userId }, { refresh: true });
  if (!target) throw notFound('Member');
  return target;
}

export async function updateMemberRole(
  em: EntityManager,
  actorId: string,
  projectId: string,
  userId: string,
  role: Role,
) {
  return withMembersLocked(em, actorId, projectId, async (tx, actor, project) => {
    refuseIfDisabled(project);
    const target = await lockedTarget(tx, projectId, userId);
    assertMayGrant(actor.role, role);
    assertMayGrant(actor.role, target.role);
    if (target.role === 'OWNER' && role !== 'OWNER' && (await countOwners(tx, projectId)) === 1) {
      throw conflict('The last OWNER cannot be demoted; make someone else an OWNER first');
    }
    target.role = role;
    target.sawSecretKey ||= seesSecretKey(role);
    await tx.flush();
    const user = await tx.findOneOrFail(UserSchema, { id: userId });
    return toMemberDto(target, user.email);
  });
}

/** Says whether the removed member could see the current secret key, and if so suggests rotating. */
export async function removeMember(em: EntityManager, actorId: string, projectId: string, userId: string) {
  return withMembersLocked(em, actorId, projectId, async (tx, actor) => {
    const target = await lockedTarget(tx, projectId, userId);
    assertMayGrant(actor.role, target.role);
    if (target.role === 'OWNER' && (await countOwners(tx, projectId)) === 1) {
      throw conflict('The last OWNER cannot be removed; make someone else an OWNER first');
    }
    const user = await tx.findOne(UserSchema, { id: userId });
    const removed = toMemberDto(target, user?.email ?? '');
    await tx.remove(target).flush();
    return {
      removed,
      sawSecretKey: target.sawSecretKey,
      ...(target.sawSecretKey
        ? {
            suggestion: `This member could see the project's secret key and may still have it. Rotate the keys with POST /users/@me/projects/${projectId}/regenerate-keys.`,
          }
        : {}),
    };
  });
}

/** Whether someone invited this address to a project (pending and unexpired): SSO may then create its account. */
export async function hasPendingInvitation(em: EntityManager, email: string): Promise<boolean> {
  return (await em.count(InvitationSchema, { email, acceptedAt: null, expiresAt: { $gt: new Date() } })) > 0;
}

/** The signed-in user joins with a token mailed to their own address. */
export async function acceptInvitation(em: EntityManager, user: { id: string; email: string }, token: string) {
  return em.transactional(async (tx) => {
    const invitation = await tx.findOne(InvitationSchema, {
      tokenHash: hashToken(token),
      acceptedAt: null,
      expiresAt: { $gt: new Date() },
    });
    if (!invitation) throw new AppError(400, 'INVALID_TOKEN', 'This invitation is invalid, expired or already used');
    if (invitation.email !== user.email) {
      throw forbidden('This invitation was sent to another email address', 'INVITATION_EMAIL_MISMATCH');
    }
    invitation.acceptedAt = new Date();
    const existing = await tx.findOne(MembershipSchema, { projectId: invitation.projectId, userId: user.id });
    if (!existing)
      tx.create(MembershipSchema, { projectId: invitation.projectId, userId: user.id, role: invitation.role });
    return { projectId: invitation.projectId, role: existing?.role ?? invitation.role };
  });
}
