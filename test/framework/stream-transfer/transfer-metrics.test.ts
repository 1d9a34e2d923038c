import test from 'ava';
import { BatonMetrics } from '@baton/http/internal/metrics.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { TransferMetrics } from '@baton/stream-transfer/internal/transfer-metrics.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';

async function setup() {
  const clock = new VirtualClock();
  const consensus = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine(), { clock });
  const propose = async (command: StreamCommand) => {
    const receipt = await consensus.propose(command);
    if (!receipt.result.ok) throw new Error(`${command.type} refused: ${JSON.stringify(receipt.result)}`);
    return receipt.result;
  };
  await propose({ type: 'register-node', node: 'n1', address: 'http://n1', slots: 10 });
  await propose({ type: 'register-node', node: 'n2', address: 'http://n2', slots: 10 });
  await propose({ type: 'create-stream', stream: 's', node: 'n1' });
  const source = new BatonMetrics({ defaultMetrics: false });
  const target = new BatonMetrics({ defaultMetrics: false });
  const onSource = new TransferMetrics(consensus, source, clock, 'n1');
  const onTarget = new TransferMetrics(consensus, target, clock, 'n2');
  onSource.start();
  onTarget.start();
  return { clock, consensus, propose, source, target, stop: () => (onSource.stop(), onTarget.stop()) };
}

/** The sample `name` whose labels include `labels`, from the exposition text, if exposed. */
const value = async (metrics: BatonMetrics, name: string, labels: Record<string, string> = {}) => {
  for (const line of (await metrics.render()).body.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = new Map([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => present.get(k) === v)) return Number(match[3]);
  }
  return undefined;
};

test('a handed-off transfer is in flight on its source, then counted completed with its virtual duration', async (t) => {
  const { clock, consensus, propose, source, target, stop } = await setup();
  t.teardown(stop);
  await propose({ type: 'transfer', stream: 's', target: 'n2' });
  t.is(await value(source, 'baton_transfers_in_flight'), 1);
  t.is(await value(target, 'baton_transfers_in_flight'), 0, 'the target does not count it');
  clock.advance(250);
  const epoch = consensus.view().state.stream('s')!.epoch;
  await propose({ type: 'close', stream: 's', node: 'n1', epoch, tail: 0, producers: {} });
  await propose({ type: 'complete', stream: 's', source: 'n1', target: 'n2', epoch });
  t.is(await value(source, 'baton_transfers_in_flight'), 0);
  t.is(await value(source, 'baton_transfers_total', { outcome: 'completed' }), 1);
  t.is(await value(source, 'baton_transfer_duration_seconds_sum', { outcome: 'completed' }), 0.25);
  t.is(await value(target, 'baton_transfers_total'), undefined, 'counted once in the cluster, by the source');
  // A duplicate completion changes nothing and counts nothing.
  await consensus.propose({ type: 'complete', stream: 's', source: 'n1', target: 'n2', epoch });
  t.is(await value(source, 'baton_transfers_total', { outcome: 'completed' }), 1);
});

test('the consensus gauges follow the applied position and leadership', async (t) => {
  const { consensus, source, stop } = await setup();
  t.teardown(stop);
  t.is(await value(source, 'baton_consensus_applied_index'), consensus.view().applied.index);
  t.is(await value(source, 'baton_consensus_is_leader'), consensus.leadership().isLeader ? 1 : 0);
  t.is(await value(source, 'baton_consensus_term'), consensus.leadership().term);
});
