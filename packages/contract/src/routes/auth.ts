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
export const OAuthConfig = z.object({
  providers: z.array(z.object({ id: z.string(), name: z.string(), authorizeUrl: z.string().url() })),
});

const Credentials = z.object({ email: Email, password: z.string().min(1).max(256) });
const Token = z.string().min(10).max(200);

export const authContract = c.router(
  {
    signup: {
      method: 'POST',
      path: '/auth/signup',
      summary: 'Create an account and start a session',
      description: 'Sets the session cookie. Refused with 403 SIGNUPS_DISABLED when the deployment disables signups.',
      metadata: meta({ auth: 'none' }),
      body: z.object({ email: Email, password: Password }),
      responses: { 201: User, 403: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
    login: {
      method: 'POST',
      path: '/auth/login',
      summary: 'Start a session',
      description: 'Sets the session cookie. Repeated failures for one address lock it out for a while (429).',
      metadata: meta({ auth: 'none' }),
      body: Credentials,
      responses: { 200: User, ...commonErrors },
    },
    logout: {
      method: 'GET',
      path: '/auth/logout',
      summary: 'End the session: revoked server-side and the cookie cleared (spec path; prefer POST)',
      metadata: meta({ auth: 'none' }),
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
      metadata: meta({ auth: 'session' }),
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
      metadata: meta({ auth: 'none' }),
      responses: { 200: OAuthConfig, ...publicErrors },
    },
    acceptInvitation: {
      method: 'POST',
      path: '/auth/accept-invitation',
      summary: 'Join a project with an invitation token (signed-in user whose email was invited)',
      metadata: meta({ auth: 'session' }),
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

export const authSchemas = { User };
