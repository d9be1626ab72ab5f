import { randomUUID } from 'node:crypto';
import { SESSION_COOKIE } from '@pigeon/contract';
import { parse as parseCookies } from 'cookie';
import type { Request, Response } from 'express';
import { jwtVerify, SignJWT } from 'jose';
import type pg from 'pg';
import type { Config } from '../../config/index.js';
import { type BatchedDelete, deleteInBatches } from '../../db/batched-delete.js';
import { queryRows, raw, sql } from '../../db/query.js';
import type { AppDeps } from '../../deps.js';

export interface SessionClaims {
  userId: string;
  /** The user's session version when the session started; a password reset bumps it. */
  version: number;
  /** This session's id, recorded in `revoked_sessions` by logout (absent in sessions from before it). */
  id?: string;
  expiresAt?: Date;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const key = (config: Config) => new TextEncoder().encode(config.secrets.session);

/** Starts a session: a signed JWT in an httpOnly, SameSite=Lax cookie (Secure on https). */
export async function startSession(res: Response, config: Config, claims: SessionClaims): Promise<void> {
  const ttlSeconds = config.auth.sessionTtlHours * 3600;
  const jwt = await new SignJWT({ sv: claims.version })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(claims.userId)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(key(config));
  res.cookie(SESSION_COOKIE, jwt, {
    httpOnly: true,
    sameSite: 'lax',
    secure: config.http.publicUrl.startsWith('https://'),
    maxAge: ttlSeconds * 1000,
    path: '/',
  });
}

/**
 * Ends the caller's session: its id goes to `revoked_sessions` until the JWT would expire (a
 * session from before ids existed ends every session of its user instead), then the cookie is
 * cleared. Without a valid session it only clears the cookie.
 */
export async function endSession(deps: AppDeps, req: Request, res: Response): Promise<void> {
  const claims = await readSession(req, deps.config);
  const db = deps.db.pool;
  if (claims?.id && claims.expiresAt) {
    await queryRows(
      db,
      sql`INSERT INTO revoked_sessions (jti, expires_at) VALUES (${claims.id}, ${claims.expiresAt}) ON CONFLICT DO NOTHING`,
    );
  } else if (claims) {
    await queryRows(db, sql`UPDATE users SET session_version = session_version + 1 WHERE id = ${claims.userId}`);
  }
  res.clearCookie(SESSION_COOKIE, {
    httpOnly: true,
    sameSite: 'lax',
    secure: deps.config.http.publicUrl.startsWith('https://'),
    path: '/',
  });
}

/** The session claims of a valid cookie, or undefined (absent, forged, expired). */
export async function readSession(req: Request, config: Config): Promise<SessionClaims | undefined> {
  const raw = req.headers.cookie ? parseCookies(req.headers.cookie)[SESSION_COOKIE] : undefined;
  if (!raw) return undefined;
  try {
    const { payload } = await jwtVerify(raw, key(config), { algorithms: ['HS256'] });
    if (typeof payload.sub !== 'string' || typeof payload.sv !== 'number') return undefined;
    const id = typeof payload.jti === 'string' && UUID.test(payload.jti) ? payload.jti : undefined;
    const expiresAt = typeof payload.exp === 'number' ? new Date(payload.exp * 1000) : undefined;
    return { userId: payload.sub, version: payload.sv, id, expiresAt };
  } catch {
    return undefined;
  }
}

/** Revocations of sessions that have expired anyway, removed in bounded statements (the clean-up job). */
export function deleteExpiredRevocations(pool: pg.Pool, batch?: number): Promise<BatchedDelete> {
  return deleteInBatches(pool, raw('revoked_sessions'), raw('expires_at <= now()'), batch);
}
