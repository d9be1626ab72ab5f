import type { EntitySchema } from '@mikro-orm/core';
import { UserSchema } from '../modules/accounts/user.entity.js';
import { AuthTokenSchema } from '../modules/auth/auth-token.entity.js';
import {
  InvitationSchema,
  MembershipSchema,
  ProjectSchema,
  ProjectSuspensionSchema,
} from '../modules/projects/project.entity.js';

/** Every entity of every module; each module exports its schemas and is listed here once. */
// biome-ignore lint/suspicious/noExplicitAny: schemas of different entity types
export const entities: EntitySchema<any, any>[] = [
  UserSchema,
  ProjectSchema,
  MembershipSchema,
  InvitationSchema,
  AuthTokenSchema,
  ProjectSuspensionSchema,
];
