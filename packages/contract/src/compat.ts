/**
 * The compatibility layers' contracts (Plunk's v1 contact routes, Resend's wire format under
 * `/resend`): an entry of their own, so that neither the SDK (which re-exports `index.ts`) nor the
 * OpenAPI documents and MCP tools (generated from `contract`) take them for Pigeon's API.
 */
export * from './routes/compat-plunk.js';
export * from './routes/compat-resend.js';
