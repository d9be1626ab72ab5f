/**
 * The templates module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */

export type { TemplateRow } from './service.js';
export { findTemplate } from './service.js';
