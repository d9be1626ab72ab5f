import type { ErrorEnvelope } from '@pigeon/contract';
import type { NextFunction, Request, Response } from 'express';
import { certainlyRolledBack } from '../db/errors.js';
import type { LayerAnswer, NativeFailure } from '../kit/layer-answer.js';
import type { Logger } from '../logger.js';
import { errorAnswer, prepareErrorAnswer } from './error-handler.js';

/**
 * express's error handler for a compatibility layer's paths (mounted before the native one): the
 * error is answered as Pigeon would (`errorAnswer`: the same statuses, messages, logging), then
 * put in the layer's shape by `translate`.
 */
export function layerErrorHandler(logger: Logger, translate: (failure: NativeFailure) => LayerAnswer) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const failed = {
      requestId: req.requestId,
      method: req.method,
      path: req.path,
      contentEncoding: req.header('content-encoding'),
      bareErrors: false,
    };
    const { status, body, unexpected } = errorAnswer(err, failed, logger);
    if (unexpected) res.locals.workRolledBack = certainlyRolledBack(err);
    if (res.headersSent) return;
    prepareErrorAnswer(req, res, err);
    const answer = translate({ status, error: (body as ErrorEnvelope).error });
    res.status(answer.status).json(answer.body);
  };
}
