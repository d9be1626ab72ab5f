import type { IncomingMessage, ServerResponse } from 'node:http';
import { contract } from '@pigeon/contract';
import express from 'express';
import type { AppDeps } from '../../deps.js';
import type { BareRoute, BareRouter } from '../../kit/bare.js';
import { sendJson } from '../../kit/bare.js';
import { bearerKey, type KeyCheck } from '../../kit/caller.js';
import { validationFailed } from '../../kit/errors.js';
import { unreadBodyError, unsafeFields, zodIssuesToFieldErrors } from '../../kit/validation.js';
import { idempotencyKeyOf } from '../idempotency/public.js';
import { deferredKey, requireKnownKey, settleKeyCheck } from '../projects/public.js';
import type { TrackEvent, TrackInput } from './track.js';

const route = contract.events.track;

/**
 * `POST /v1/track` with a well-formed key, answered on the bare node request (`http/fast-routes.ts`):
 * the busiest route, whose own work is one grouped statement, paid more for express's routing,
 * request wrappers and middleware chain than for that statement. Every step of the express route
 * is here, in the same order, with the same functions, so the answers are the same: the JSON body
 * (express's own parser, same limit), a body that is not JSON (415), unsafe text (422), the
 * contract's schema (422), the Idempotency-Key, the track itself, its key check and rate-limit
 * headers, and errors through `errorAnswer`. Anything else (no key or a malformed one, a query
 * string, the dashboard's `/events/track`) is express's.
 */
export function bareTrackRoute(deps: AppDeps, trackEvent: TrackEvent, bodyLimit: string): BareRouter {
  const parseJson = express.json({ limit: bodyLimit }) as unknown as (
    req: IncomingMessage,
    res: ServerResponse,
    next: (err?: unknown) => void,
  ) => void;
  const readBody = (req: IncomingMessage, res: ServerResponse) =>
    new Promise<unknown>((resolve, reject) => {
      parseJson(req, res, (err) => (err ? reject(err) : resolve((req as { body?: unknown }).body)));
    });

  return (req: IncomingMessage): BareRoute | undefined => {
    if (req.method !== 'POST' || req.url !== route.path) return undefined;
    const key = deferredKey(bearerKey(req.headers.authorization));
    if (!key) return undefined;
    return {
      route: route.path,
      handle: async (res) => {
        await requireKnownKey(deps, key);
        const input = validInput(req, await readBody(req, res));
        const owner = { by: key.keyType, keyHash: key.keyHash };
        const settle = (check: KeyCheck) => settleKeyCheck(deps, res, check, key);
        const data = await trackEvent(owner, input, idempotencyKeyOf(req), settle);
        const body = { success: true as const, data };
        sendJson(res, 200, deps.validateResponses ? route.responses[200].parse(body) : body);
      },
    };
  };
}

/** The body as the express route's middleware and ts-rest check it, in their order. */
function validInput(req: IncomingMessage, body: unknown): TrackInput {
  const unread = unreadBodyError(req.headers, body);
  if (unread) throw unread;
  const unsafe = unsafeFields(body);
  if (unsafe.length > 0) throw validationFailed(unsafe);
  const parsed = route.body.safeParse(body);
  if (!parsed.success) throw validationFailed(zodIssuesToFieldErrors(parsed.error));
  return parsed.data;
}
