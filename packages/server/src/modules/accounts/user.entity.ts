import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.uuid().primary(),
    email: p.text(),
    /** Null for an account that signs in only through a provider (single sign-on). */
    passwordHash: p.text().nullable().hidden(),
    emailVerified: p.boolean().default(false),
    /** Bumped on password reset: sessions carrying an older version are refused. */
    sessionVersion: p.integer().default(1),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
export type User = InferEntity<typeof UserSchema>;
