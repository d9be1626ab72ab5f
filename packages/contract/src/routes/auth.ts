import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, publicErrors, Timestamp } from '../common.js';
import { meta } from '../meta.js';

const c = initContract();

export const Email = z.string().trim().toLowerCase().email().max(254);
export const Password = z
  .string()
  .min(10, 'must be at least 10 characters')
  .max(256)
  .describe("At least 10 characters, not one of the most common passwords, not the account's email address");

export const User = z.object({
  id: z.string().uuid(),
  email: z.string().email(),
  emailVerified: z.boolean(),
  createdAt: Timestamp,
});

export const Ok = z.object({ success: z.literal(true) });
export const Accepted = z.object({ success: z.literal(true), message: z.string() });
/** The sign-in providers a deployment can configure: any OpenID Connect provider, and two presets. */
export const OAuthProviderId = z.enum(['oidc', 'google', 'github']);
export type OAuthProviderId = z.infer<typeof OAuthProviderId>;

export const OAuthConfig = z.object({
  providers: z.array(
    z.object({
      id: z.string().describe("`oidc` (the deployment's own OpenID Connect provider), `google` or `github`"),
      name: z.string().describe('What a sign-in button shows'),
      authorizeUrl: z
        .string()
        .url()
        .describe(
          'Open this in the browser (a top-level navigation) to sign in; add `?next=/path` to come back to a page of Pigeon',
        ),
    }),
  ),
});

export const LinkedIdentity = z.object({
  provider: OAuthProviderId,
  email: z.string().email().describe('The verified address the provider gave when the identity was linked'),
  linkedAt: Timestamp,
  lastUsedAt: Timestamp,
});

export const SignInMethods = z.object({
  hasPassword: z.boolean(),
  identities: z.array(LinkedIdentity),
});

/** The account of the signup and login examples (so the login example works after the signup one). */
const EXAMPLE_ACCOUNT = { email: 'ada@example.com', password: 'correct horse battery staple' };

const Credentials = z.object({ email: Email, password: z.string().min(1).max(256) });
const Token = z.string().min(10).max(200);

export const authContract = c.router(
  {
    signup: {
      method: 'POST',
      path: '/auth/signup',
      summary: 'Create an account and start a session',
      description: 'Sets the session cookie. Refused with 403 SIGNUPS_DISABLED when the deployment disables signups.',
      metadata: meta({ auth: 'none', example: EXAMPLE_ACCOUNT }),
      body: z.object({ email: Email, password: Password }),
      responses: { 201: User, 403: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
    login: {
      method: 'POST',
      path: '/auth/login',
      summary: 'Start a session',
      description: 'Sets the session cookie. Repeated failures for one address lock it out for a while (429).',
      metadata: meta({ auth: 'none', example: EXAMPLE_ACCOUNT }),
      body: Credentials,
      responses: { 200: User, ...commonErrors },
    },
    logout: {
      method: 'GET',
      path: '/auth/logout',
      summary: 'End the session: revoked server-side and the cookie cleared (spec path; prefer POST)',
      description: 'Refused (403) when another site makes the request: a link elsewhere cannot sign a person out.',
      metadata: meta({ auth: 'none', changesState: true }),
      responses: { 200: Ok, ...publicErrors },
    },
    logoutPost: {
      method: 'POST',
      path: '/auth/logout',
      summary: 'End the session: revoked server-side, so a copy of the cookie stops working too',
      metadata: meta({ auth: 'none' }),
      body: c.noBody(),
      responses: { 200: Ok, ...publicErrors },
    },
    verifyEmail: {
      method: 'POST',
      path: '/auth/verify-email',
      summary: 'Confirm an email address with the token mailed to it',
      metadata: meta({ auth: 'none' }),
      body: z.object({ token: Token }),
      responses: { 200: User, 400: ErrorEnvelope, ...commonErrors },
    },
    requestVerification: {
      method: 'POST',
      path: '/auth/request-verification',
      summary: 'Mail a new email-verification link to the signed-in user',
      metadata: meta({ auth: 'session', permission: 'account' }),
      body: c.noBody(),
      responses: { 202: Accepted, ...commonErrors },
    },
    requestPasswordReset: {
      method: 'POST',
      path: '/auth/request-password-reset',
      summary: 'Mail a password-reset link',
      description:
        'Answers 202 whether or not the address has an account; 429 `TOO_MANY_ATTEMPTS` after 10 requests from one IP within 15 minutes.',
      metadata: meta({ auth: 'none' }),
      body: z.object({ email: Email }),
      responses: { 202: Accepted, ...commonErrors },
    },
    resetPassword: {
      method: 'POST',
      path: '/auth/reset-password',
      summary: 'Set a new password with a reset token',
      description: 'Tokens are single-use and expire after an hour. Every existing session of the user ends.',
      metadata: meta({ auth: 'none' }),
      body: z.object({ token: Token, password: Password }),
      responses: { 200: Ok, 400: ErrorEnvelope, ...commonErrors },
    },
    oauthConfig: {
      method: 'GET',
      path: '/auth/oauth-config',
      summary: 'OAuth providers configured on this deployment',
      description:
        'The single sign-on providers this deployment is configured with (none by default), each with the URL ' +
        'that starts its sign-in. The browser opens `authorizeUrl`; after the provider, Pigeon sets the same ' +
        'session cookie as POST /auth/login and redirects to `next` (a path of Pigeon, the console `/app/` by default).',
      metadata: meta({ auth: 'none' }),
      responses: { 200: OAuthConfig, ...publicErrors },
    },
    signInMethods: {
      method: 'GET',
      path: '/users/@me/sign-in-methods',
      summary: "The signed-in user's ways to sign in: a password, linked providers, or both",
      metadata: meta({ auth: 'session', permission: 'account' }),
      responses: { 200: SignInMethods, ...commonErrors },
    },
    unlinkIdentity: {
      method: 'DELETE',
      path: '/users/@me/sign-in-methods/:provider',
      summary: 'Unlink a sign-in provider from the signed-in user',
      description:
        'Refused with 409 CONFLICT (details.reason LAST_SIGN_IN_METHOD) when it is the only way left to sign in (no ' +
        'password, no other provider): set a password first (POST /auth/request-password-reset) or link another provider.',
      metadata: meta({ auth: 'session', permission: 'account' }),
      pathParams: z.object({ provider: OAuthProviderId }),
      body: c.noBody(),
      responses: { 200: SignInMethods, 404: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
    acceptInvitation: {
      method: 'POST',
      path: '/auth/accept-invitation',
      summary: 'Join a project with an invitation token (signed-in user whose email was invited)',
      metadata: meta({ auth: 'session', permission: 'account' }),
      body: z.object({ token: Token }),
      responses: {
        200: z.object({ projectId: z.string().uuid(), role: z.string() }),
        400: ErrorEnvelope,
        403: ErrorEnvelope,
        ...commonErrors,
      },
    },
  },
  { strictStatusCodes: true },
);

export const authSchemas = { User, OAuthConfig, SignInMethods };
