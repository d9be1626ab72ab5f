import type { EntityManager } from '@mikro-orm/postgresql';
import type { Queryable } from '../../db/sql.js';
import { rotateWebhookSecret } from '../webhooks/secrets.js';
import { MANAGERS, refuseIfDisabled, requireMembership } from './service.js';

/** `POST /users/@me/projects/:id/webhook-secret`: OWNER or ADMIN, like the API keys. */
export async function regenerateWebhookSecret(em: EntityManager, db: Queryable, userId: string, projectId: string) {
  const { project } = await requireMembership(em, userId, projectId, MANAGERS);
  refuseIfDisabled(project);
  const rotated = await rotateWebhookSecret(db, project.id);
  return {
    secret: rotated.secret,
    createdAt: rotated.createdAt.toISOString(),
    previousSecretExpiresAt: rotated.previousSecretExpiresAt?.toISOString() ?? null,
  };
}
