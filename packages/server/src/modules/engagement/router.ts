import express, { type NextFunction, type Request, type RequestHandler, type Response, Router } from 'express';
import type { AppDeps } from '../../deps.js';
import { sendPage } from '../../kit/pages.js';
import { type LinkClaims, verifyLinkToken } from '../rendering/public.js';
import './pages.js';
import { findLinkContact, type LinkContact, setSubscribedFromLink } from './service.js';
import {
  type ManageView,
  manageView,
  saveTopicsFromLink,
  unsubscribeFromLink,
  unsubscribeView,
} from './topic-links.js';

/**
 * Pages reached from inside emails: the subscription pages and the RFC 8058 one-click POST (the
 * open pixel and the click redirect are `tracking-routes.ts`). Outside the API contract: they
 * answer HTML and redirects, and their only credential is the signed token in the URL.
 */
export function engagementRouter(deps: AppDeps): Router {
  const router = Router();
  const db = deps.db.pool;
  const secret = deps.config.secrets.linkSigning;
  const form = formBody();

  /** Runs a page handler with the token's contact, or answers the error page. */
  const withContact =
    (handler: (req: Request, res: Response, claims: LinkClaims, contact: LinkContact) => Promise<void>) =>
    async (req: Request, res: Response) => {
      const claims = verifyLinkToken(String(req.params.token), secret);
      if (!claims) return invalidLink(res);
      const contact = await findLinkContact(db, claims);
      if (!contact) return goneLink(res);
      await handler(req, res, claims, contact);
    };

  const changeAndShow = async (req: Request, res: Response, claims: LinkClaims, subscribed: boolean) => {
    const contact = await setSubscribedFromLink(db, claims, subscribed);
    if (!contact) return goneLink(res);
    showSubscription(req, res, contact, subscribed);
  };

  /** The page after a change of `subscribed` (or the project's redirect for it). */
  const showSubscription = (req: Request, res: Response, contact: LinkContact, subscribed: boolean) => {
    const redirect = subscribed ? contact.subscribedRedirectUrl : contact.unsubscribedRedirectUrl;
    if (redirect) return void res.set('Referrer-Policy', 'no-referrer').redirect(303, redirect);
    sendPage(res, 200, 'subscription-done', {
      title: subscribed ? 'Subscribed' : 'Unsubscribed',
      projectName: contact.projectName,
      email: contact.email,
      subscribed,
      manageAction: `/manage/${req.params.token}`,
    });
  };

  /** A page about the contact whose form posts back to the same URL. */
  const contactPage = (view: 'subscribe' | 'unsubscribe' | 'manage', title: string) =>
    withContact(async (req, res, _claims, contact) =>
      sendPage(res, 200, view, {
        title,
        projectName: contact.projectName,
        email: contact.email,
        subscribed: contact.subscribed,
        action: `/${view}/${req.params.token}`,
      }),
    );

  // Links in mail that change state open a page; the change is the POST of its button (DESIGN.md §9),
  // so mail scanners that open every link (Safe Links and the like) subscribe nobody.
  router.get('/subscribe/:token', contactPage('subscribe', 'Subscribe'));
  router.post(
    '/subscribe/:token',
    form,
    withContact(async (req, res, claims) => {
      if (req.body?.action !== 'subscribe') return badForm(res);
      await changeAndShow(req, res, claims, true);
    }),
  );

  /** A topic mail's link (its token names the topic) offers to leave that topic, or everything. */
  router.get(
    '/unsubscribe/:token',
    withContact(async (req, res, claims) => {
      const view = await unsubscribeView(db, claims);
      if (!view) return goneLink(res);
      sendPage(res, 200, 'unsubscribe', {
        title: 'Unsubscribe',
        projectName: view.contact.projectName,
        email: view.contact.email,
        subscribed: view.contact.subscribed,
        topicName: view.topic?.name ?? null,
        action: `/unsubscribe/${req.params.token}`,
      });
    }),
  );

  /**
   * The page's buttons and RFC 8058 one-click (`List-Unsubscribe=One-Click`) land here. A topic
   * mail's link leaves that topic only (`unsubscribeFromLink`); `unsubscribe_all` leaves everything.
   */
  router.post(
    '/unsubscribe/:token',
    form,
    withContact(async (req, res, claims) => {
      if (req.body?.['List-Unsubscribe'] === 'One-Click') {
        const done = await unsubscribeFromLink(db, claims, 'one_click');
        return void res
          .status(done ? 200 : 404)
          .type('text/plain')
          .send(done ? `Unsubscribed${done.topic ? ` from ${done.topic.name}` : ''}\n` : 'Unknown contact\n');
      }
      if (req.body?.action === 'unsubscribe_all') return changeAndShow(req, res, claims, false);
      if (req.body?.action !== 'unsubscribe') return badForm(res);
      const done = await unsubscribeFromLink(db, claims, 'link');
      if (!done) return goneLink(res);
      if (!done.topic) return showSubscription(req, res, done.contact, false);
      sendPage(res, 200, 'topic-left', {
        title: 'Unsubscribed',
        projectName: done.contact.projectName,
        email: done.contact.email,
        topicName: done.topic.name,
        manageUrl: `/manage/${req.params.token}`,
      });
    }),
  );

  /** The preference page: the contact's public topics to tick, and subscribing or leaving everything. */
  const showManage = (req: Request, res: Response, view: ManageView, saved: boolean) =>
    sendPage(res, 200, 'manage', {
      title: 'Email preferences',
      projectName: view.contact.projectName,
      email: view.contact.email,
      subscribed: view.contact.subscribed,
      topics: view.topics,
      saved,
      action: `/manage/${req.params.token}`,
    });

  router.get(
    '/manage/:token',
    withContact(async (req, res, claims) => {
      const view = await manageView(db, claims);
      if (!view) return goneLink(res);
      showManage(req, res, view, false);
    }),
  );

  router.post(
    '/manage/:token',
    form,
    withContact(async (req, res, claims) => {
      const action = req.body?.action;
      if (action === 'save') {
        const view = await saveTopicsFromLink(db, claims, {
          shown: list(req.body.shown),
          ticked: list(req.body.topic),
        });
        if (!view) return goneLink(res);
        return showManage(req, res, view, true);
      }
      if (action !== 'subscribe' && action !== 'unsubscribe') return badForm(res);
      await changeAndShow(req, res, claims, action === 'subscribe');
    }),
  );

  return router;
}

/**
 * Form fields from `application/x-www-form-urlencoded` (the pages' forms) or `multipart/form-data`
 * (RFC 8058 says one-click POSTs SHOULD use it); no files, small bodies.
 */
function formBody() {
  const urlencoded = express.urlencoded({ extended: false, limit: '4kb' });
  // multer is loaded with the first multipart form (RFC 8058 one-click POSTs), not at start.
  let multipart: Promise<RequestHandler> | undefined;
  const parseMultipart = () => {
    multipart ??= import('multer').then(({ default: multer }) =>
      multer({ limits: { files: 0, fields: 10, fieldSize: 1024 } }).none(),
    );
    return multipart;
  };
  return (req: Request, res: Response, next: NextFunction) => {
    if (!req.is('multipart/form-data')) return urlencoded(req, res, next);
    parseMultipart().then((parse) => parse(req, res, (err?: unknown) => (err ? badForm(res) : next())), next);
  };
}

/** A form field that may repeat (checkboxes): its values, or none. */
const list = (value: unknown): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v): v is string => typeof v === 'string');

function linkError(res: Response, status: number, title: string, message: string): void {
  sendPage(res, status, 'link-error', { title, message });
}

const invalidLink = (res: Response) =>
  linkError(res, 400, 'This link is not valid', 'Check that you opened the whole link from the email.');

const goneLink = (res: Response) =>
  linkError(res, 404, 'This link no longer works', 'The address it was sent to is no longer on the list.');

const badForm = (res: Response) =>
  linkError(res, 400, 'Nothing was changed', 'The form was incomplete. Go back to the email and use its link again.');
