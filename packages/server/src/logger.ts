import pino from 'pino';

export type Logger = pino.Logger;

/**
 * Servers log to stdout; an admin command (`status --json`, `keys`) logs to stderr (`toStderr`), so
 * its stdout is its answer alone and can be piped.
 */
export function createLogger(level: string, options: { toStderr?: boolean } = {}): Logger {
  const settings = { level, base: { service: 'pigeon' }, timestamp: pino.stdTimeFunctions.isoTime };
  return options.toStderr ? pino(settings, pino.destination(2)) : pino(settings);
}
