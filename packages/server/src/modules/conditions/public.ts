/**
 * The conditions module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */

export type { CheckedCondition } from './engine.js';
export { checkCondition, conditionSql, evaluation, loadFacts, loadScope, refsOf, treesInScope } from './engine.js';
export type { FieldKind } from './fields.js';
export { operatorsOf } from './operators.js';
export { dependsOnClock, evaluateTree, prepareCondition } from './tree.js';
export { UNIT_MS } from './values.js';
