import { token } from './token.js';

/**
 * Structured logging with pino's call shape (`log.info({stream}, 'closed')`), so the system
 * implementation is pino itself and tests can capture records.
 */
export interface LogFn {
  (msg: string): void;
  (fields: Record<string, unknown>, msg?: string): void;
}

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  /** A logger that adds `bindings` to every record (e.g. `{plugin: 'raft', member: 'n1'}`). */
  child(bindings: Record<string, unknown>): Logger;
}

export const LOGGER = token<Logger>('Logger');
