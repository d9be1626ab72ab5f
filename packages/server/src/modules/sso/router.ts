import { timingSafeEqual } from 'node:crypto';
import { parse as parseCookies } from 'cookie';
import { type Request, type Response, Router } from 'express';
import * as client from 'openid-client';
import type { AppDeps } from '../../deps.js';
import { AppError, httpStatusOf } from '../../kit/errors.js';
import { definePage, sendPage } from '../../kit/pages.js';
import { safeNext, startSession } from '../auth/public.js';
import { ATTEMPT_TTL_MINUTES } from './attempts.js';
import { ProviderAnswerRefused, ProviderUnavailable } from './providers.js';
import { callbackPath, createProviderClients, finishSignIn, startPath, startSignIn } from './service.js';

/** Binds an attempt to the browser that started it: a callback URL opened in another browser is refused. */
const STATE_COOKIE = 'pigeon_sso_state';

definePage(
  'sso-error',
  `<% layout('@layout') %>
<h1>Sign-in failed</h1>
<p class="error" role="alert"><%= it.message %></p>
<% if (it.suggestion) { %><p><%= it.suggestion %></p><% } %>
<p><a class="button" href="/login">Back to sign-in</a></p>`,
);

/**
 * The browser side of single sign-on: `start` sends the browser to the provider with a fresh
 * state, nonce and PKCE challenge; the provider sends it back to `callback`, which signs in with
 * the same session cookie as a password and redirects to a path of Pigeon. Both are top-level GET
 * navigations; a failure is a page that says what went wrong, with no session and nothing created.
 */
export function ssoRouter(deps: AppDeps): Router {
  const router = Router();
  const clients = createProviderClients(deps.config);
  const cookieOptions = {
    httpOnly: true,
    sameSite: 'lax' as const, // sent on the provider's top-level redirect back
    secure: deps.config.http.publicUrl.startsWith('https://'),
    path: '/auth/oauth',
  };

  router.get(startPath(':provider'), async (req: Request, res: Response) => {
    const provider = clients.get(String(req.params.provider));
    if (!provider)
      return failurePage(res, new AppError('not-found', 'NOT_FOUND', 'This sign-in provider is not configured'));
    try {
      const { url, state } = await startSignIn(deps, provider, safeNext(req.query.next));
      res.cookie(STATE_COOKIE, state, { ...cookieOptions, maxAge: ATTEMPT_TTL_MINUTES * 60_000 });
      res.redirect(302, url.href);
    } catch (err) {
      failurePage(res, explain(deps, err, provider.settings.name));
    }
  });

  router.get(callbackPath(':provider'), async (req: Request, res: Response) => {
    const provider = clients.get(String(req.params.provider));
    if (!provider)
      return failurePage(res, new AppError('not-found', 'NOT_FOUND', 'This sign-in provider is not configured'));
    res.clearCookie(STATE_COOKIE, cookieOptions);
    try {
      const state = typeof req.query.state === 'string' ? req.query.state : '';
      const callbackUrl = new URL(req.originalUrl, deps.config.http.publicUrl);
      const { user, nextPath } = await finishSignIn(deps, provider, {
        callbackUrl,
        state: sameState(req, state) ? state : undefined,
      });
      await startSession(res, deps.config, { userId: user.id, version: user.sessionVersion });
      res.redirect(303, nextPath);
    } catch (err) {
      failurePage(res, explain(deps, err, provider.settings.name));
    }
  });
  return router;
}

function sameState(req: Request, state: string): boolean {
  const cookie = req.headers.cookie ? parseCookies(req.headers.cookie)[STATE_COOKIE] : undefined;
  if (!cookie || !state) return false;
  const a = Buffer.from(cookie);
  const b = Buffer.from(state);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What the person is told: our own refusals as they are, the provider's problems in plain words. */
function explain(deps: AppDeps, err: unknown, providerName: string): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ProviderUnavailable) {
    deps.logger.warn({ err }, 'sign-in provider unavailable');
    return new AppError('upstream', 'UPSTREAM_ERROR', `${providerName} could not be reached`, {
      suggestion: 'Try again in a few minutes.',
    });
  }
  if (err instanceof client.AuthorizationResponseError) {
    return new AppError('invalid', 'BAD_REQUEST', `${providerName} did not sign you in (${err.error})`, {
      suggestion: err.error_description ?? 'Start the sign-in again.',
    });
  }
  if (isProtocolError(err)) {
    deps.logger.warn({ err }, 'sign-in provider answer refused');
    return new AppError('invalid', 'INVALID_TOKEN', `The answer from ${providerName} could not be verified`, {
      suggestion:
        'Start the sign-in again; if it keeps failing, ask your administrator to check the provider settings.',
    });
  }
  throw err;
}

const isProtocolError = (err: unknown) =>
  err instanceof client.ClientError ||
  err instanceof client.ResponseBodyError ||
  err instanceof client.WWWAuthenticateChallengeError ||
  err instanceof ProviderAnswerRefused ||
  (err instanceof Error && err.name === 'OperationProcessingError');

function failurePage(res: Response, err: AppError): void {
  sendPage(res, httpStatusOf(err), 'sso-error', {
    title: 'Sign-in failed',
    message: err.message,
    suggestion: err.extra.suggestion ?? null,
  });
}
