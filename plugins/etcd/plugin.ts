import { CLOCK, LOGGER, METADATA_CONSENSUS, STATE_MACHINE, RNG } from '@baton/contracts';
import { definePlugin } from '@baton/kernel';
import { EtcdConsensus } from './etcd-consensus.js';
import { etcdConsensusOptions } from './options.js';

/**
 * The metadata consensus on an etcd cluster: the variant's state machine replicated through a
 * log kept in etcd, for deployments whose members should not run their own Raft.
 */
export const etcdConsensusPlugin = definePlugin({
  id: 'etcd-consensus',
  description:
    'Replicates the state machine through a log in etcd (compare-and-append, watch, snapshots, election).',
  provides: [METADATA_CONSENSUS],
  requires: [STATE_MACHINE, CLOCK, RNG, LOGGER],
  options: etcdConsensusOptions,
  register: (ctx) =>
    ctx.provide(METADATA_CONSENSUS, {
      useFactory: (resolve) =>
        new EtcdConsensus(ctx.options, {
          machine: resolve(STATE_MACHINE),
          clock: resolve(CLOCK),
          rng: resolve(RNG),
          logger: resolve(LOGGER),
        }),
    }),
});
