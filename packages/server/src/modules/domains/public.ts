/**
 * The domains module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export { dkimKeyObject } from './dkim.js';
export type { DomainRecords } from './dns-check.js';
export { checkRecords, createResolver, expectedRecords } from './dns-check.js';
export type { DomainRow, VerifiedSender } from './service.js';
export { createDomain, listDomains, requireVerifiedSender } from './service.js';
