import type { ResendCreateContactBody, ResendUpdateContactBody } from '@pigeon/contract/compat';
import type { ProjectRef } from '../../kit/caller.js';
import { notFound } from '../../kit/errors.js';

/**
 * Resend's audiences and contacts over the project's contacts. A project is one audience (and one
 * segment, Resend's newer name): its id is the project's, its name the project's name.
 */
export const toAudience = (project: ProjectRef, object: 'audience' | 'segment') => ({
  object,
  id: project.id,
  name: project.name,
  created_at: createdAtOf(project.id),
});

/** Project ids are UUIDv7: their first 48 bits are the time they were made, in milliseconds. */
const createdAtOf = (id: string) => new Date(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toISOString();

/** The project, when `audienceId` names it; Resend's 404 otherwise. */
export function requireAudience(project: ProjectRef, audienceId: string | undefined): void {
  if (audienceId !== undefined && audienceId !== project.id) throw notFound('Audience');
}

interface NativeContact {
  id: string;
  email: string;
  subscribed: boolean;
  data: Record<string, unknown>;
  createdAt: string;
}

/** Resend's first and last names are the contact data's `firstName` and `lastName`; the rest are its properties. */
export function toResendContact(c: NativeContact) {
  const { firstName, lastName, ...properties } = c.data;
  return {
    id: c.id,
    email: c.email,
    first_name: typeof firstName === 'string' ? firstName : null,
    last_name: typeof lastName === 'string' ? lastName : null,
    created_at: c.createdAt,
    unsubscribed: !c.subscribed,
    properties,
  };
}

/** A Resend contact body's fields as the native contact's `subscribed` and `data`. */
export function toNativeContact(body: ResendCreateContactBody | ResendUpdateContactBody) {
  const names = {
    ...(body.first_name !== undefined ? { firstName: body.first_name } : {}),
    ...(body.last_name !== undefined ? { lastName: body.last_name } : {}),
  };
  const data = { ...body.properties, ...names };
  return {
    subscribed: body.unsubscribed === undefined ? undefined : !body.unsubscribed,
    data: Object.keys(data).length ? data : undefined,
  };
}
