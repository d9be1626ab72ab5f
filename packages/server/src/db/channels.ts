/**
 * `NOTIFY` channels more than one module uses, named once here (a database-wide namespace), so a
 * module can wake another's workers without importing it.
 */

/** Queued (or resumed) email: wakes the delivery workers. */
export const EMAIL_QUEUED_CHANNEL = 'pigeon_email_queued';
