import test from 'ava';
import { CLOCK } from '@baton/contracts/internal/clock.js';
import { LOGGER } from '@baton/contracts/internal/logger.js';
import {
  METADATA_CONSENSUS,
  STATE_MACHINE,
  type MetadataConsensus,
} from '@baton/contracts/internal/metadata-consensus.js';
import { PEER_TRANSPORT } from '@baton/contracts/internal/peer-transport.js';
import { RNG } from '@baton/contracts/internal/rng.js';
import { createHost } from '@baton/kernel/internal/host.js';
import { WiringError } from '@baton/kernel/internal/wiring-error.js';
import { kvStateMachine, type KvCommand, type KvResult, type KvState } from '@baton/conformance/internal/kv-state-machine.js';
import { SimNetwork } from '@baton/testing/internal/sim/network.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { PEER_AUTH } from '@baton/http/internal/peer-auth-plugin.js';
import { httpPeerTransportPlugin, raftConsensusPlugin } from '@baton/plugin-raft/internal/plugin.js';
import type { HttpPeerTransport } from '@baton/plugin-raft/internal/transport-http.js';
import { eventually } from '../../hosts/eventually.js';
import { testPeerAuthenticator } from '../../support/peer-auth.js';
import { MemoryLogger } from './support/silent-logger.js';
import { CountingClock, serveRoutes, stalledPost } from './support/stalled-peer.js';

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

/** Member b's HTTP transport built by a host from `options`, its routes on a loopback server. */
async function transportHost(options: Record<string, unknown>) {
  const clock = new CountingClock();
  const h = createHost()
    .add(httpPeerTransportPlugin, { member: 'b', peers: { a: 'http://127.0.0.1:9', b: 'http://127.0.0.1:9', c: 'http://127.0.0.1:9' }, cluster: 'c', ...options }, 'peerTransport')
    .value(CLOCK, clock)
    .value(LOGGER, new MemoryLogger())
    .value(PEER_AUTH, testPeerAuthenticator('b', ['a', 'b', 'c']))
    .build();
  await h.start();
  const transport = h.get(PEER_TRANSPORT) as HttpPeerTransport;
  transport.listen('raft', { onMessage: () => undefined, onRequest: async () => ({ channel: 'raft', body: 'ok' }) });
  const routes = await serveRoutes(transport);
  return { clock, transport, ...routes, close: async () => {
      await routes.close();
      await h.stop();
    },
  };
}

test('the HTTP transport plugin passes its large-message and request bounds through to the transport', async (t) => {
  const b = await transportHost({ maxLargeMessagesInFlight: 1, largeMessageDeadlineMs: 1_500, requestDeadlineMs: 2_500 });
  const large = stalledPost(b.url, 'messages', 'a');
  const request = stalledPost(b.url, 'requests', 'a');
  try {
    await eventually(() => b.clock.armed === 2, "a's two stalled bodies to be admitted");
    // One large message in all (the default is one per peer, two here).
    t.is((await b.postLarge('c', 'snapshot of c')).status, 503);
    b.clock.advance(1_500);
    await eventually(() => large.seen.body !== undefined, 'the large message to be ended by largeMessageDeadlineMs');
    t.is(large.seen.status, 408);
    t.is(large.seen.body?.deadline_ms, 1_500);
    t.is(request.seen.status, undefined, 'the request has longer');
    b.clock.advance(1_000);
    await eventually(() => request.seen.body !== undefined, 'the request to be ended by requestDeadlineMs');
    t.is(request.seen.status, 408);
    t.is(request.seen.body?.deadline_ms, 2_500);
    t.is(b.transport.stats.rejectedSlowBody, 2);
  } finally {
    large.abort();
    request.abort();
    await b.close();
  }
});

test('the HTTP transport plugin refuses bounds that are not positive whole numbers, naming each', (t) => {
  const build = (options: Record<string, unknown>) => () =>
    createHost()
      .add(httpPeerTransportPlugin, { member: 'b', peers: {}, ...options }, 'peerTransport')
      .value(CLOCK, new VirtualClock())
      .value(LOGGER, new MemoryLogger())
      .value(PEER_AUTH, testPeerAuthenticator('b', ['b']))
      .build();
  const error = t.throws(build({ maxLargeMessagesInFlight: 0, largeMessageDeadlineMs: 1.5, requestDeadlineMs: -1 }), { instanceOf: WiringError });
  for (const key of ['maxLargeMessagesInFlight', 'largeMessageDeadlineMs', 'requestDeadlineMs']) t.regex(error!.message, new RegExp(`peerTransport\\.${key}`), key);
  t.throws(build({ requestDeadlineMs: '5000' }), { instanceOf: WiringError, message: /requestDeadlineMs/ });
  t.notThrows(build({ maxLargeMessagesInFlight: 3, largeMessageDeadlineMs: 60_000, requestDeadlineMs: 10_000 }));
});
