export { type Config, loadConfig } from './config/index.js';
export type { AppDeps } from './deps.js';
export { createApp } from './http/app.js';
export { createLogger } from './logger.js';
export { type RunningPigeon, startPigeon } from './main.js';
