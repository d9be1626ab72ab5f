import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

export type TokenPurpose = 'VERIFY_EMAIL' | 'RESET_PASSWORD';

/** Single-use tokens mailed to users; only their SHA-256 is stored. */
export const AuthTokenSchema = defineEntity({
  name: 'AuthToken',
  tableName: 'auth_tokens',
  properties: {
    tokenHash: p.type('blob').$type<Buffer>().primary(),
    userId: p.uuid(),
    purpose: p.text().$type<TokenPurpose>(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type AuthToken = InferEntity<typeof AuthTokenSchema>;
