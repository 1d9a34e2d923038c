import { z } from 'zod';
import { CLOCK } from '../../framework/contracts/clock.js';
import { METADATA_CONSENSUS, STATE_MACHINE } from '../../framework/contracts/metadata-consensus.js';
import { definePlugin } from '../../framework/kernel/plugin.js';
import { LocalConsensus } from '../../framework/testing/fakes/local-consensus.js';

/**
 * A one-voter stream metadata consensus in process memory: enough to run and try one node
 * alone, or several nodes in one process sharing it. Not replicated and not durable: the
 * metadata is gone when the process exits. A deployment chooses a replicated consensus plugin
 * in the config instead; the node does not change.
 */
export const singleMemberConsensusPlugin = definePlugin({
  id: 'single-member-consensus',
  description: 'One-voter MetadataConsensus in memory, for development: not replicated, not durable.',
  provides: [METADATA_CONSENSUS],
  requires: [STATE_MACHINE, CLOCK],
  options: z.object({ self: z.string().min(1, 'the member id, the same as node.self') }).strict(),
  register: (ctx) =>
    ctx.provide(METADATA_CONSENSUS, {
      useFactory: (resolve) => new LocalConsensus(resolve(STATE_MACHINE), { self: ctx.options.self, clock: resolve(CLOCK) }),
    }),
});
