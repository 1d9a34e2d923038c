import { pino, type Logger as Pino } from 'pino';
import type { Logger } from '@baton/contracts';

export interface LoggerOptions {
  level?: string;
  /** Human-readable lines (pino-pretty) instead of JSON; defaults to "stdout is a terminal". */
  pretty?: boolean;
  /** Write to stderr instead of stdout (a CLI keeps stdout for its own output). */
  toStderr?: boolean;
}

/** The production logger: pino, JSON by default, pretty on a terminal. */
export function createPinoLogger(options: LoggerOptions = {}): Logger {
  const fd = options.toStderr ? 2 : 1;
  const pretty = options.pretty ?? Boolean(process.stdout.isTTY);
  const base: Pino = pretty
    ? pino({
        level: options.level ?? 'info',
        transport: { target: 'pino-pretty', options: { destination: fd, translateTime: 'SYS:HH:MM:ss.l' } },
      })
    : pino({ level: options.level ?? 'info' }, pino.destination({ dest: fd, sync: false }));
  return base as unknown as Logger;
}

/** A logger that drops everything (tests that do not look at logs). */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' }) as unknown as Logger;
}
