import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'pigeon' }, timestamp: pino.stdTimeFunctions.isoTime });
}
