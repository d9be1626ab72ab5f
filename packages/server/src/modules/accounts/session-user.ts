import type { Request } from 'express';
import type { AppDeps } from '../../deps.js';
import type { SessionUser } from '../../kit/caller.js';
import { AppError } from '../../kit/errors.js';
import { readSession } from '../auth/public.js';
import { findSessionUser } from './service.js';

/** The user of a request's session cookie (a live session of the user's current version), or 401. */
export async function requireSessionUser(deps: AppDeps, req: Request): Promise<SessionUser> {
  const claims = await readSession(req, deps.config);
  if (claims) {
    const user = await findSessionUser(deps.db.pool, claims.userId, claims.id ?? null);
    if (user && user.sessionVersion === claims.version) {
      return { id: user.id, email: user.email, emailVerified: user.emailVerified, createdAt: user.createdAt };
    }
  }
  throw new AppError('unauthenticated', 'UNAUTHORIZED', 'Sign in first', {
    suggestion: 'POST /auth/login sets the session cookie; API clients use "Authorization: Bearer sk_…" instead.',
  });
}
