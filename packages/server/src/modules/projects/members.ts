import { insufficientRoleMessage, permits, type Role } from '@pigeon/contract';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { queryRows, type Sql, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { MemberAccess } from '../../kit/caller.js';
import { AppError, conflict, forbidden, notFound } from '../../kit/errors.js';
import { sendSystemMail } from '../../mail/system-mail.js';
import { hashToken, newToken } from '../auth/public.js';
import { findMembership } from './membership.js';
import { INVITATION_COLUMNS, type Invitation, type Membership, type Project, seesSecretKey } from './project.js';
import { refuseIfDisabled } from './service.js';

const INVITATION_TTL_MS = 7 * 24 * 3600_000;

/** A member as listed: the membership and its user's email. */
type Member = Pick<Membership, 'userId' | 'role' | 'sawSecretKey' | 'createdAt'> & { email: string };

const toMemberDto = (m: Member) => ({
  userId: m.userId,
  email: m.email,
  role: m.role,
  joinedAt: m.createdAt.toISOString(),
});

/** Members of a project (`m.project_id = …` and more in `where`), with their emails. */
const selectMembers = (db: Queryable, where: Sql) =>
  queryRows<Member>(
    db,
    sql`SELECT m.user_id AS "userId", m.role, m.saw_secret_key AS "sawSecretKey", m.created_at AS "createdAt",
               coalesce(u.email, '') AS email
        FROM memberships m LEFT JOIN users u ON u.id = m.user_id
        WHERE ${where} ORDER BY m.created_at, m.user_id`,
  );

const toInvitationDto = (i: { id: string; email: string; role: Role; expiresAt: Date; createdAt: Date }) => ({
  id: i.id,
  email: i.email,
  role: i.role,
  expiresAt: i.expiresAt.toISOString(),
  createdAt: i.createdAt.toISOString(),
});

export async function listMembers(db: Queryable, projectId: string) {
  const members = await selectMembers(db, sql`m.project_id = ${projectId}::uuid`);
  const invitations = await queryRows<Invitation>(
    db,
    sql`SELECT ${INVITATION_COLUMNS} FROM invitations i
        WHERE i.project_id = ${projectId}::uuid AND i.accepted_at IS NULL AND i.expires_at > now()
        ORDER BY i.created_at, i.id`,
  );
  return { members: members.map(toMemberDto), invitations: invitations.map(toInvitationDto) };
}

/** Only an OWNER may hand out or take away the OWNER role. */
function assertMayGrant(actorRole: Role, role: Role) {
  if (role === 'OWNER' && actorRole !== 'OWNER')
    throw forbidden('Only an OWNER can make someone an OWNER', 'INSUFFICIENT_ROLE');
}

/** An existing user is added at once; an unknown address gets a mailed invitation token. */
export async function inviteMember(deps: AppDeps, actor: MemberAccess, email: string, role: Role) {
  const db = deps.db.pool;
  const { project, userId: actorId } = actor;
  const projectId = project.id;
  refuseIfDisabled(project);
  assertMayGrant(actor.role, role);
  const [user] = await queryRows<{ id: string; email: string }>(
    db,
    sql`SELECT id, email FROM users WHERE email = ${email}`,
  );
  if (user) {
    const [added] = await queryRows<Member>(
      db,
      sql`INSERT INTO memberships (project_id, user_id, role, saw_secret_key)
          VALUES (${projectId}::uuid, ${user.id}::uuid, ${role}, ${seesSecretKey(role)}::boolean)
          ON CONFLICT DO NOTHING
          RETURNING user_id AS "userId", role, saw_secret_key AS "sawSecretKey", created_at AS "createdAt", ${user.email}::text AS email`,
    );
    if (!added) throw conflict('This user is already a member');
    return { status: 'added' as const, member: toMemberDto(added) };
  }
  const { token, hash } = newToken();
  const invitation = await inTransaction(deps.db.pool, async (tx) => {
    // The address's earlier pending invitation to the project gives way to this one.
    await queryRows(
      tx,
      sql`DELETE FROM invitations WHERE project_id = ${projectId}::uuid AND email = ${email} AND accepted_at IS NULL`,
    );
    const [created] = await queryRows<Invitation>(
      tx,
      sql`INSERT INTO invitations AS i (id, project_id, email, role, token_hash, invited_by, expires_at)
          VALUES (${uuidv7()}::uuid, ${projectId}::uuid, ${email}, ${role}, ${hash}::bytea, ${actorId}::uuid,
                  now() + make_interval(secs => ${INVITATION_TTL_MS / 1000}))
          RETURNING ${INVITATION_COLUMNS}`,
    );
    return created as Invitation;
  });
  await sendSystemMail(deps, email, `You are invited to ${project.name} on Pigeon`, [
    `You have been invited to join the project "${project.name}" as ${role}.`,
    'Sign in (or create an account) with this email address, then accept the invitation here (valid for 7 days):',
    `${deps.config.http.publicUrl}/app/accept-invitation#token=${token}`,
    '',
    'From a program instead: POST /auth/accept-invitation with this token.',
    `Token: ${token}`,
  ]);
  return { status: 'invited' as const, invitation: toInvitationDto(invitation) };
}

async function countOwners(db: Queryable, projectId: string) {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM memberships WHERE project_id = ${projectId}::uuid AND role = 'OWNER'`,
  );
  return row?.n ?? 0;
}

/** The permission of the member routes (`inviteMember`, `updateMember`, `removeMember` in the contract). */
const MEMBERS_PERMISSION = 'project.manage';

/**
 * Runs a membership change with the project row locked (`FOR UPDATE`), so changes to one
 * project's members happen one at a time and each sees the roles the previous one committed:
 * two OWNERs demoting or removing each other at once cannot leave the project without an OWNER.
 * `authenticate` checked the actor's role before; it is read again after the lock (it may just
 * have been taken away).
 */
function withMembersLocked<T>(
  pool: pg.Pool,
  actor: MemberAccess,
  change: (tx: pg.PoolClient, actor: Membership, project: Project) => Promise<T>,
): Promise<T> {
  const projectId = actor.project.id;
  return inTransaction(pool, async (tx) => {
    await queryRows(tx, sql`SELECT 1 FROM projects WHERE id = ${projectId}::uuid FOR UPDATE`);
    const found = await findMembership(tx, projectId, actor.userId);
    if (!found) throw notFound('Project');
    if (!permits(MEMBERS_PERMISSION, found.membership.role)) {
      throw forbidden(insufficientRoleMessage(MEMBERS_PERMISSION), 'INSUFFICIENT_ROLE');
    }
    return change(tx, found.membership, found.project);
  });
}

async function lockedTarget(tx: Queryable, projectId: string, userId: string): Promise<Member> {
  const [target] = await selectMembers(tx, sql`m.project_id = ${projectId}::uuid AND m.user_id = ${userId}::uuid`);
  if (!target) throw notFound('Member');
  return target;
}

export async function updateMemberRole(pool: pg.Pool, access: MemberAccess, userId: string, role: Role) {
  const projectId = access.project.id;
  return withMembersLocked(pool, access, async (tx, actor, project) => {
    refuseIfDisabled(project);
    const target = await lockedTarget(tx, projectId, userId);
    assertMayGrant(actor.role, role);
    assertMayGrant(actor.role, target.role);
    if (target.role === 'OWNER' && role !== 'OWNER' && (await countOwners(tx, projectId)) === 1) {
      throw conflict('The last OWNER cannot be demoted; make someone else an OWNER first');
    }
    await queryRows(
      tx,
      sql`UPDATE memberships SET role = ${role}, saw_secret_key = saw_secret_key OR ${seesSecretKey(role)}::boolean
          WHERE project_id = ${projectId}::uuid AND user_id = ${userId}::uuid`,
    );
    return toMemberDto({ ...target, role });
  });
}

/** Says whether the removed member could see the current secret key, and if so suggests rotating. */
export async function removeMember(pool: pg.Pool, access: MemberAccess, userId: string) {
  const projectId = access.project.id;
  return withMembersLocked(pool, access, async (tx, actor) => {
    const target = await lockedTarget(tx, projectId, userId);
    assertMayGrant(actor.role, target.role);
    if (target.role === 'OWNER' && (await countOwners(tx, projectId)) === 1) {
      throw conflict('The last OWNER cannot be removed; make someone else an OWNER first');
    }
    await queryRows(
      tx,
      sql`DELETE FROM memberships WHERE project_id = ${projectId}::uuid AND user_id = ${userId}::uuid`,
    );
    return {
      removed: toMemberDto(target),
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
export async function hasPendingInvitation(db: Queryable, email: string): Promise<boolean> {
  const found = await queryRows(
    db,
    sql`SELECT 1 FROM invitations WHERE email = ${email} AND accepted_at IS NULL AND expires_at > now() LIMIT 1`,
  );
  return found.length > 0;
}

/** The signed-in user joins with a token mailed to their own address. */
export async function acceptInvitation(pool: pg.Pool, user: { id: string; email: string }, token: string) {
  return inTransaction(pool, async (tx) => {
    const [invitation] = await queryRows<Invitation>(
      tx,
      sql`SELECT ${INVITATION_COLUMNS} FROM invitations i
          WHERE i.token_hash = ${hashToken(token)}::bytea AND i.accepted_at IS NULL AND i.expires_at > now()
          FOR UPDATE`,
    );
    if (!invitation)
      throw new AppError('invalid', 'INVALID_TOKEN', 'This invitation is invalid, expired or already used');
    if (invitation.email !== user.email) {
      throw forbidden('This invitation was sent to another email address', 'INVITATION_EMAIL_MISMATCH');
    }
    await queryRows(tx, sql`UPDATE invitations SET accepted_at = now() WHERE id = ${invitation.id}::uuid`);
    const [added] = await queryRows<{ role: Role }>(
      tx,
      sql`INSERT INTO memberships (project_id, user_id, role, saw_secret_key)
          VALUES (${invitation.projectId}::uuid, ${user.id}::uuid, ${invitation.role}, ${seesSecretKey(invitation.role)}::boolean)
          ON CONFLICT DO NOTHING RETURNING role`,
    );
    // Already a member (perhaps added a moment ago: a statement of its own sees that commit): that role stays.
    const [existing] = added
      ? []
      : await queryRows<{ role: Role }>(
          tx,
          sql`SELECT role FROM memberships WHERE project_id = ${invitation.projectId}::uuid AND user_id = ${user.id}::uuid`,
        );
    return { projectId: invitation.projectId, role: added?.role ?? existing?.role ?? invitation.role };
  });
}
