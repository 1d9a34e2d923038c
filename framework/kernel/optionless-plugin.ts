import { z } from 'zod';
import type { Token } from '@baton/contracts';
import { definePlugin } from './plugin.js';

export interface OptionlessPluginDefinition<T> {
  id: string;
  description: string;
  /** The one token the plugin provides. */
  provides: Token<T>;
  /** Makes the host's instance (called once per host, when first resolved). */
  create: () => T;
}

/**
 * A plugin that takes no options (its config section must be empty) and provides one token
 * from a factory that needs nothing from the host: the system clock and randomness, a
 * variant's replicated state machine.
 */
export function defineOptionlessPlugin<T>(definition: OptionlessPluginDefinition<T>) {
  return definePlugin({
    id: definition.id,
    description: definition.description,
    provides: [definition.provides],
    options: z.object({}).strict(),
    register: (ctx) => ctx.provide(definition.provides, { useFactory: definition.create }),
  });
}
