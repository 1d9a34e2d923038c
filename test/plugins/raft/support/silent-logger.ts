import type { LogFn, Logger } from '@baton/contracts/internal/logger.js';

/** A Logger that keeps records in memory (for assertions) and prints nothing. */
export class MemoryLogger implements Logger {
  constructor(
    readonly records: { level: string; fields: Record<string, unknown>; msg?: string }[] = [],
    private readonly bindings: Record<string, unknown> = {},
  ) {}

  private at(level: string): LogFn {
    return ((a: unknown, b?: string) => {
      const fields = typeof a === 'string' ? {} : (a as Record<string, unknown>);
      const msg = typeof a === 'string' ? a : b;
      this.records.push({ level, fields: { ...this.bindings, ...fields }, msg });
      if (this.records.length > 2000) this.records.splice(0, 1000);
    }) as LogFn;
  }

  debug = this.at('debug');
  info = this.at('info');
  warn = this.at('warn');
  error = this.at('error');

  child(bindings: Record<string, unknown>): Logger {
    return new MemoryLogger(this.records, { ...this.bindings, ...bindings });
  }
}
