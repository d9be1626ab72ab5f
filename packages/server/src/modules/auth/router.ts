import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerUser } from '../../http/auth.js';
import * as accounts from '../accounts/service.js';
import { acceptInvitation } from '../projects/members.js';
import { endSession, startSession } from './session.js';

const s = initServer();

export const createAuthRouter = (deps: AppDeps) => {
  const em = () => deps.db.orm.em;
  return s.router(contract.auth, {
    signup: async ({ body, res }) => {
      const user = await accounts.signup(deps, em(), body.email, body.password);
      await startSession(res, deps.config, { userId: user.id, version: user.sessionVersion });
      return { status: 201, body: accounts.toUserDto(user) };
    },
    login: async ({ body, req, res }) => {
      const user = await accounts.login(em(), body.email, body.password, req.ip ?? 'unknown');
      await startSession(res, deps.config, { userId: user.id, version: user.sessionVersion });
      return { status: 200, body: accounts.toUserDto(user) };
    },
    logout: async ({ res }) => {
      endSession(res, deps.config);
      return { status: 200, body: { success: true } };
    },
    verifyEmail: async ({ body }) => {
      const user = await accounts.verifyEmail(em(), body.token);
      return { status: 200, body: accounts.toUserDto(user) };
    },
    requestVerification: async ({ req }) => {
      await accounts.requestVerification(deps, em(), callerUser(req).id);
      return { status: 202, body: { success: true, message: 'A verification link was mailed to you' } };
    },
    requestPasswordReset: async ({ body }) => {
      await accounts.requestPasswordReset(deps, em(), body.email);
      return {
        status: 202,
        body: { success: true, message: 'If the address has an account, a reset link is on its way' },
      };
    },
    resetPassword: async ({ body }) => {
      await accounts.resetPassword(em(), body.token, body.password);
      return { status: 200, body: { success: true } };
    },
    oauthConfig: async () => ({ status: 200, body: { providers: [] } }),
    acceptInvitation: async ({ body, req }) => ({
      status: 200,
      body: await acceptInvitation(em(), callerUser(req), body.token),
    }),
  });
};
