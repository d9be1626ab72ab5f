/** Spec §8: whole message at most 40 MB; base64 attachments add a third. */
export const SEND_BODY_LIMIT = '56mb';
export const DEFAULT_BODY_LIMIT = '1mb';
/** Sign-in, sign-up and password forms: what anyone may make Pigeon read, before knowing who they are. */
export const ANONYMOUS_BODY_LIMIT = '64kb';
