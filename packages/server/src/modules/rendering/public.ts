/**
 * The rendering module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export { ANCHOR_HREF, decodeAttribute } from './anchors.js';
export type { LinkClaims, TrackingClaims } from './links.js';
export {
  emailIdOfReplyToken,
  replyToken,
  signToken,
  signTrackingToken,
  subscriptionUrls,
  verifyLinkToken,
  verifyToken,
  verifyTrackingToken,
} from './links.js';
export { markdownToHtml } from './markdown.js';
export { dataFieldsUsed, htmlToText, missingVariables, renderSubject, renderTemplate } from './render.js';
export { textPart } from './text-part.js';
export { missingVariableWarnings } from './warnings.js';
