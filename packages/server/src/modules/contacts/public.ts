/**
 * The contacts module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export { applyDataRules } from './data-rules.js';
export { contactTotal, listFields } from './fields.js';
export { listContacts } from './list.js';
export type { ContactRow } from './rows.js';
export {
  createMissingContacts,
  subscribeFromLink,
  toContactDto,
  unsubscribeSuppressed,
  updateContact,
  upsertContact,
} from './rows.js';
export { createOrUpdateContact, getContact, lookupEmails, patchContact, removeContact } from './service.js';
