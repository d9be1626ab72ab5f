import type { EntityName, FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../http/errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Loads one resource by id within the caller's project. Another project's id, an unknown id and
 * a malformed id are all the same 404: nothing reveals that a resource exists elsewhere.
 */
export async function findInProject<T extends { id: string; projectId: string }>(
  em: EntityManager,
  entity: EntityName<T>,
  id: string,
  projectId: string,
  what: string,
): Promise<T> {
  if (!UUID.test(id)) throw notFound(what);
  const found = await em.findOne(entity, { id, projectId } as FilterQuery<T>);
  if (!found) throw notFound(what);
  return found;
}
