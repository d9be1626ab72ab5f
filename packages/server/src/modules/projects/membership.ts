import { queryRows, sql } from '../../db/query.js';
import { isUuid } from '../../db/scoped.js';
import type { Queryable } from '../../db/sql.js';
import { type Membership, PROJECT_COLUMNS, type Project } from './project.js';

type Row = Project & { memberRole: Membership['role']; sawSecretKey: boolean; joinedAt: Date };

/**
 * The one membership rule, used by the front door (`http/auth.ts` for X-Project-Id,
 * `http/permission.ts` for a project in the path) and by the member changes (after their lock):
 * a user belongs to a project with the role of their `memberships` row; an id that is not a uuid
 * names no project. Callers choose the answer to a non-member (403 for the header, 404 for a path).
 */
export async function findMembership(
  db: Queryable,
  projectId: string,
  userId: string,
): Promise<{ project: Project; membership: Membership } | undefined> {
  if (!isUuid(projectId)) return undefined;
  const [row] = await queryRows<Row>(
    db,
    sql`SELECT ${PROJECT_COLUMNS}, m.role AS "memberRole", m.saw_secret_key AS "sawSecretKey", m.created_at AS "joinedAt"
        FROM memberships m JOIN projects p ON p.id = m.project_id
        WHERE m.project_id = ${projectId}::uuid AND m.user_id = ${userId}::uuid`,
  );
  if (!row) return undefined;
  const { memberRole, sawSecretKey, joinedAt, ...project } = row;
  return { project, membership: { projectId, userId, role: memberRole, sawSecretKey, createdAt: joinedAt } };
}
