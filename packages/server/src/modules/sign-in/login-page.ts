import express, { type Request, type Response, Router } from 'express';
import type { AppDeps } from '../../deps.js';
import { crossSite } from '../../kit/cross-site.js';
import { AppError, httpStatusOf } from '../../kit/errors.js';
import { definePage, sendPage } from '../../kit/pages.js';
import { unsafeText } from '../../kit/validation.js';
import * as accounts from '../accounts/public.js';
import { safeNext, startSession } from '../auth/public.js';
import { oauthConfig } from '../sso/public.js';

definePage(
  'login',
  `<% layout('@layout') %>
<h1>Sign in to Pigeon</h1>
<% if (it.error) { %><p class="error" role="alert"><%= it.error %></p><% } %>
<form method="post" action="/login">
  <input type="hidden" name="next" value="<%= it.next %>">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="<%= it.email %>">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
</form>
<% it.providers.forEach((p) => { %>
<p><a class="button secondary" href="<%= p.href %>">Sign in with <%= p.name %></a></p>
<% }) %>`,
);

/**
 * A plain sign-in form for Pigeon's own pages (the outbox viewer). Same rules as POST /auth/login:
 * the same password check, failure throttle and session cookie.
 */
export function loginPageRouter(deps: AppDeps): Router {
  const router = Router();
  // Single sign-on buttons: each provider's start URL, coming back to the same `next`.
  const providers = (next: string) =>
    oauthConfig(deps.config).providers.map((p) => ({
      name: p.name,
      href: `${p.authorizeUrl}?next=${encodeURIComponent(next)}`,
    }));
  router.get('/login', (req, res) => {
    const next = safeNext(req.query.next);
    sendPage(res, 200, 'login', { title: 'Sign in', next, email: '', error: null, providers: providers(next) });
  });
  router.post('/login', express.urlencoded({ extended: false, limit: '4kb' }), async (req: Request, res: Response) => {
    const email = String(req.body?.email ?? '')
      .trim()
      .toLowerCase();
    const next = safeNext(req.body?.next);
    const refused = crossSite(req, deps.config.http.publicUrl)
      ? 'Sign in from Pigeon’s own page: a form on another site cannot sign you in.'
      : unsafeText(req.body, '').length > 0
        ? 'The email or password contains characters that cannot be used.'
        : undefined;
    if (refused) {
      sendPage(res, crossSite(req, deps.config.http.publicUrl) ? 403 : 400, 'login', {
        title: 'Sign in',
        next,
        email: '',
        error: refused,
        providers: providers(next),
      });
      return;
    }
    try {
      const user = await accounts.login(deps, email, String(req.body?.password ?? ''), req.ip ?? 'unknown');
      await startSession(res, deps.config, { userId: user.id, version: user.sessionVersion });
      res.redirect(303, next);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      sendPage(res, httpStatusOf(err), 'login', {
        title: 'Sign in',
        next,
        email,
        error: err.message,
        providers: providers(next),
      });
    }
  });
  return router;
}
