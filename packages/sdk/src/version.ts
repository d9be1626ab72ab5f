/** The SDK's version, sent in the User-Agent; a test keeps it equal to package.json's. */
export const SDK_VERSION = '0.1.0';
