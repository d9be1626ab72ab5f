import { SESSION_COOKIE } from '@pigeon/contract';
import { parse as parseCookies } from 'cookie';
import type { Request, Response } from 'express';
import { jwtVerify, SignJWT } from 'jose';
import type { Config } from '../../config/index.js';

export interface SessionClaims {
  userId: string;
  /** The user's session version when the session started; a password reset bumps it. */
  version: number;
}

const key = (config: Config) => new TextEncoder().encode(config.secrets.session);

/** Starts a session: a signed JWT in an httpOnly, SameSite=Lax cookie (Secure on https). */
export async function startSession(res: Response, config: Config, claims: SessionClaims): Promise<void> {
  const ttlSeconds = config.auth.sessionTtlHours * 3600;
  const jwt = await new SignJWT({ sv: claims.version })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(claims.userId)
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

export function endSession(res: Response, config: Config): void {
  res.clearCookie(SESSION_COOKIE, {
    httpOnly: true,
    sameSite: 'lax',
    secure: config.http.publicUrl.startsWith('https://'),
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
    return { userId: payload.sub, version: payload.sv };
  } catch {
    return undefined;
  }
}
