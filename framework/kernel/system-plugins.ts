import { CLOCK } from '../contracts/clock.js';
import { LOGGER } from '../contracts/logger.js';
import { RNG } from '../contracts/rng.js';
import { logOptions } from './log-config.js';
import { defineOptionlessPlugin } from './optionless-plugin.js';
import { createPinoLogger } from './pino-logger.js';
import { definePlugin } from './plugin.js';
import { SystemClock } from './system-clock.js';
import { SystemRng } from './system-rng.js';

export const systemClockPlugin = defineOptionlessPlugin({
  id: 'system-clock',
  description: 'Wall-clock time and Node timers.',
  provides: CLOCK,
  create: () => new SystemClock(),
});

export const systemRngPlugin = defineOptionlessPlugin({
  id: 'system-rng',
  description: 'Cryptographic randomness from the operating system.',
  provides: RNG,
  create: () => new SystemRng(),
});

export const pinoLoggerPlugin = definePlugin({
  id: 'pino-logger',
  description: 'Structured logs with pino; human-readable on a terminal.',
  provides: [LOGGER],
  options: logOptions,
  register: (ctx) => ctx.provide(LOGGER, { useFactory: () => createPinoLogger(ctx.options) }),
});

/** The defaults every host starts from: real time, real randomness, pino. */
export const systemDefaults = [
  { plugin: systemClockPlugin },
  { plugin: systemRngPlugin },
  { plugin: pinoLoggerPlugin },
] as const;
