import type { EmailStatus } from '@pigeon/contract';
import { raw, type Sql } from '../../db/query.js';

/** A stored email status as a SQL literal; the names are the contract's `EmailStatus`. */
export const status = (name: Exclude<EmailStatus, 'SCHEDULED' | 'DELIVERED'>): Sql => raw(`'${name}'`);
