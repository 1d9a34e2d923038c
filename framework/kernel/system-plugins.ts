import { CLOCK, RNG } from '@baton/contracts';
import { defineOptionlessPlugin } from './optionless-plugin.js';
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

/**
 * The defaults every host starts from: real time and real randomness. The logger is a plugin of
 * its own choosing (pinoLoggerPlugin from @baton/plugin-pino), so the kernel pulls in no logging
 * library for a plugin author who only defines and tests a plugin.
 */
export const systemDefaults = [{ plugin: systemClockPlugin }, { plugin: systemRngPlugin }] as const;
