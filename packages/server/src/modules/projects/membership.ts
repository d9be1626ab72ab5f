import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../../db/scoped.js';
import { type Membership, MembershipSchema, type Project, ProjectSchema } from './project.entity.js';

/**
 * The one membership rule, used by the dashboard's session check (`http/auth.ts`, X-Project-Id)
 * and by every project action (`requireMembership`): a user belongs to a project with the role of
 * their `memberships` row; an id that is not a uuid names no project. Callers choose the answer
 * to a non-member (403 for the header, 404 for a path).
 */
export async function findMembership(
  em: EntityManager,
  projectId: string,
  userId: string,
): Promise<{ project: Project; membership: Membership } | undefined> {
  if (!isUuid(projectId)) return undefined;
  const membership = await em.findOne(MembershipSchema, { projectId, userId });
  const project = membership ? await em.findOne(ProjectSchema, { id: projectId }) : null;
  return membership && project ? { project, membership } : undefined;
}
