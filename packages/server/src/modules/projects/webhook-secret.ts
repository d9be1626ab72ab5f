import type { AppDeps } from '../../deps.js';
import { rotateWebhookSecret } from '../webhooks/public.js';
import { MANAGERS, refuseIfDisabled, requireMembership } from './service.js';

/** `POST /users/@me/projects/:id/webhook-secret`: OWNER or ADMIN, like the API keys. */
export async function regenerateWebhookSecret(deps: Pick<AppDeps, 'db'>, userId: string, projectId: string) {
  const { project } = await requireMembership(deps.db.pool, userId, projectId, MANAGERS);
  refuseIfDisabled(project);
  const rotated = await rotateWebhookSecret(deps.db.pool, project.id);
  return {
    secret: rotated.secret,
    createdAt: rotated.createdAt.toISOString(),
    previousSecretExpiresAt: rotated.previousSecretExpiresAt?.toISOString() ?? null,
  };
}
