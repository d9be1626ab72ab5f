import { plunkContract, resendContract } from '@pigeon/contract/compat';
import { createExpressEndpoints } from '@ts-rest/express';
import type { Express } from 'express';
import type { AppDeps } from '../deps.js';
import { requestValidationErrorHandler } from '../kit/validation.js';
import { toPlunkFailure } from '../modules/compat-plunk/errors.js';
import { createPlunkRouter } from '../modules/compat-plunk/router.js';
import { toResendFailure } from '../modules/compat-resend/errors.js';
import { createResendRouter } from '../modules/compat-resend/router.js';
import type { contractMiddleware } from './contract-middleware.js';
import { layerErrorHandler } from './layer-errors.js';

type Middleware = ReturnType<typeof contractMiddleware>;

/**
 * The compatibility layers' routes (Plunk's v1 contacts, Resend under `/resend`), after the native
 * ones: the same middleware (key, rate limit, body) and the same services, their own shapes.
 */
export function mountCompatEndpoints(app: Express, deps: AppDeps, middleware: Middleware): void {
  const options = {
    requestValidationErrorHandler,
    globalMiddleware: middleware,
    responseValidation: deps.validateResponses ?? false,
    logInitialization: false,
  };
  createExpressEndpoints(plunkContract, createPlunkRouter(deps), app, options);
  createExpressEndpoints(resendContract, createResendRouter(deps), app, options);
}

/** Each layer's errors in its own shape; mounted after the 404 handler, before the native error handler. */
export function mountCompatErrorHandlers(app: Express, deps: AppDeps): void {
  app.use('/v1/contacts', layerErrorHandler(deps.logger, toPlunkFailure));
  app.use('/resend', layerErrorHandler(deps.logger, toResendFailure));
}
