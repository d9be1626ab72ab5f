/**
 * The references module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */

export type { Ref } from './service.js';
export { copyRefs, dropRefs, findUsages, groupUsages, saveRefs } from './service.js';
