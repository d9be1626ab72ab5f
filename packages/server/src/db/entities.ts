import type { EntitySchema } from '@mikro-orm/core';

/** Every entity of every module; each module exports its schemas and is listed here once. */
export const entities: EntitySchema[] = [];
