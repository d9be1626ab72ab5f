export { loadConfig, type Config } from './config/index.js';
export { createApp } from './http/app.js';
export { startPigeon, type RunningPigeon } from './main.js';
export { createLogger } from './logger.js';
export type { AppDeps } from './deps.js';
