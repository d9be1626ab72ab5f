/**
 * The composition module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */

export type { BuiltLayout } from './built.js';
export { composeBuiltMessage, takeApart } from './built.js';
export type { ComposedMessage, CompositionSettings, MessageContent } from './compose.js';
export { composeMessage } from './compose.js';
