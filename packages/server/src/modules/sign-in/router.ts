import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerUser } from '../../kit/caller.js';
import * as accounts from '../accounts/public.js';
import { endSession, startSession } from '../auth/public.js';
import { acceptInvitation } from '../projects/public.js';
import * as sso from '../sso/public.js';
import { listSignInMethods, unlinkIdentity } from '../sso/public.js';

const s = initServer();

export const createAuthRouter = (deps: AppDeps) => {
  return s.router(contract.auth, {
    signup: async ({ body, res }) => {
      const user = await accounts.signup(deps, body.email, body.password);
      await startSession(res, deps.config, { userId: user.id, version: user.sessionVersion });
      return { status: 201, body: accounts.toUserDto(user) };
    },
    login: async ({ body, req, res }) => {
      const user = await accounts.login(deps, body.email, body.password, req.ip ?? 'unknown');
      await startSession(res, deps.config, { userId: user.id, version: user.sessionVersion });
      return { status: 200, body: accounts.toUserDto(user) };
    },
    logout: async ({ req, res }) => {
      await endSession(deps, req, res);
      return { status: 200, body: { success: true } };
    },
    logoutPost: async ({ req, res }) => {
      await endSession(deps, req, res);
      return { status: 200, body: { success: true } };
    },
    verifyEmail: async ({ body }) => {
      const user = await accounts.verifyEmail(deps.db.pool, body.token);
      return { status: 200, body: accounts.toUserDto(user) };
    },
    requestVerification: async ({ req }) => {
      await accounts.requestVerification(deps, callerUser(req).id);
      return { status: 202, body: { success: true, message: 'A verification link was mailed to you' } };
    },
    requestPasswordReset: async ({ body, req }) => {
      await accounts.acceptPasswordResetRequest(deps, { email: body.email, ip: req.ip ?? 'unknown' });
      return {
        status: 202,
        body: { success: true, message: 'If the address has an account, a reset link is on its way' },
      };
    },
    resetPassword: async ({ body }) => {
      await accounts.resetPassword(deps, body.token, body.password);
      return { status: 200, body: { success: true } };
    },
    oauthConfig: async () => ({ status: 200, body: sso.oauthConfig(deps.config) }),
    signInMethods: async ({ req }) => ({
      status: 200,
      body: await listSignInMethods(deps.db.pool, callerUser(req).id),
    }),
    unlinkIdentity: async ({ params, req }) => ({
      status: 200,
      body: await unlinkIdentity(deps.db.pool, callerUser(req).id, params.provider),
    }),
    acceptInvitation: async ({ body, req }) => ({
      status: 200,
      body: await acceptInvitation(deps.db.pool, callerUser(req), body.token),
    }),
  });
};
