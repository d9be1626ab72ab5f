/**
 * The dmarc-reports module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export { dmarcAlignment, dmarcReportAddress } from './alignment.js';
export { deleteExpiredDmarcReports } from './expiry.js';
export { receiveDmarcReports } from './receive.js';
