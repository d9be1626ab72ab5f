import type { AppDeps } from '../../deps.js';
import type { ProjectRef } from '../../kit/caller.js';
import { rotateWebhookSecret } from '../webhooks/public.js';
import { refuseIfDisabled } from './service.js';

/** `POST /users/@me/projects/:id/webhook-secret` (`project.manage`, like the API keys). */
export async function regenerateWebhookSecret(deps: Pick<AppDeps, 'db'>, project: ProjectRef) {
  refuseIfDisabled(project);
  const rotated = await rotateWebhookSecret(deps.db.pool, project.id);
  return {
    secret: rotated.secret,
    createdAt: rotated.createdAt.toISOString(),
    previousSecretExpiresAt: rotated.previousSecretExpiresAt?.toISOString() ?? null,
  };
}
