import test from 'ava';
import { CLOCK } from '../../../framework/contracts/clock.js';
import { LOGGER } from '../../../framework/contracts/logger.js';
import { METADATA_CONSENSUS, STATE_MACHINE } from '../../../framework/contracts/metadata-consensus.js';
import { PEER_TRANSPORT } from '../../../framework/contracts/peer-transport.js';
import { RNG } from '../../../framework/contracts/rng.js';
import { createHost } from '../../../framework/kernel/host.js';
import { WiringError } from '../../../framework/kernel/wiring-error.js';
import { kvStateMachine, type KvCommand, type KvResult, type KvState } from '../../../framework/testing/fakes/kv-state-machine.js';
import { SimNetwork } from '../../../framework/testing/sim/network.js';
import { SeededRng } from '../../../framework/testing/sim/seeded-rng.js';
import { VirtualClock } from '../../../framework/testing/sim/virtual-clock.js';
import type { MetadataConsensus } from '../../../framework/contracts/metadata-consensus.js';
import { raftConsensusPlugin } from '../../../plugins/raft/plugin.js';
import { MemoryLogger } from './support/silent-logger.js';

function host(options: unknown) {
  const clock = new VirtualClock();
  const network = new SimNetwork(clock, new SeededRng(1));
  const h = createHost()
    .add(raftConsensusPlugin, options, 'plugins[0].options')
    .value(STATE_MACHINE, kvStateMachine)
    .value(CLOCK, clock)
    .value(RNG, new SeededRng(2))
    .value(LOGGER, new MemoryLogger())
    .value(PEER_TRANSPORT, network.transport('solo'))
    .build();
  return { h, clock };
}

test('the raft plugin provides METADATA_CONSENSUS in a host, started and stopped by the host', async (t) => {
  const { h, clock } = host({ member: 'solo', voters: ['solo'], snapshotInterval: 3 });
  await h.start();
  const consensus = h.get(METADATA_CONSENSUS) as MetadataConsensus<KvState, KvCommand, KvResult>;
  let receipt: Awaited<ReturnType<typeof consensus.propose>> | undefined;
  const pending = consensus.propose({ op: 'put', key: 'k', value: 'v' }).then((r) => (receipt = r));
  for (let i = 0; i < 200 && !receipt; i++) await clock.advanceAsync(10);
  await pending;
  t.deepEqual(receipt?.result, { op: 'put', previous: null });
  t.true(consensus.leadership().isLeader);
  await h.stop();
  await t.throwsAsync(consensus.propose({ op: 'get', key: 'k' }), { message: /stopped/ });
});

test('invalid raft options fail the host build with the config path and the rule broken', (t) => {
  const error = t.throws(() => host({ member: 'solo', voters: ['solo'], electionTicks: 3, heartbeatTicks: 3 }), { instanceOf: WiringError });
  t.regex(error!.message, /heartbeatTicks/);
  t.regex(error!.message, /plugins\[0\]\.options/);
  const missing = t.throws(() => host({ voters: ['solo'] }), { instanceOf: WiringError });
  t.regex(missing!.message, /member/);
});
