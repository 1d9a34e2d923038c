import { LOGGER } from '@baton/contracts';
import { definePlugin, logOptions } from '@baton/kernel';
import { createPinoLogger } from './pino-logger.js';

/** Structured logs with pino: JSON lines, or readable ones on a terminal (pino-pretty). */
export const pinoLoggerPlugin = definePlugin({
  id: 'pino-logger',
  description: 'Structured logs with pino; human-readable on a terminal.',
  provides: [LOGGER],
  options: logOptions,
  register: (ctx) => ctx.provide(LOGGER, { useFactory: () => createPinoLogger(ctx.options) }),
});
