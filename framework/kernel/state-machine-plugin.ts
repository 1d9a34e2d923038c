import { z } from 'zod';
import { STATE_MACHINE, type StateMachine } from '../contracts/metadata-consensus.js';
import { definePlugin } from './plugin.js';

export interface StateMachinePluginDefinition {
  id: string;
  description: string;
  /** One fresh machine per host: the consensus plugin that replicates it owns its state. */
  create: () => StateMachine<any, any, any>;
}

/**
 * A variant's replicated state machine as a plugin: it takes no options and provides
 * STATE_MACHINE, so whichever consensus plugin the host chooses can replicate it.
 */
export function defineStateMachinePlugin(definition: StateMachinePluginDefinition) {
  return definePlugin({
    id: definition.id,
    description: definition.description,
    provides: [STATE_MACHINE],
    options: z.object({}).strict(),
    register: (ctx) => ctx.provide(STATE_MACHINE, { useFactory: definition.create }),
  });
}
