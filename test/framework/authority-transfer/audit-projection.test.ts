import test from 'ava';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { flushMicrotasks } from '@baton/conformance/internal/virtual-clock.js';
import { commitThroughConsensus, engineHarness, establish, request } from './harness.js';

test('a commit with several voters stays pending until every one acknowledged or left', async (t) => {
  const h = await engineHarness({ voters: ['east-1', 'west-1', 'north-1'] });
  await establish(h.consensus, 'proj', 'east');
  h.probe.answer('west', 0);
  await h.engine.start(request());
  t.deepEqual(h.consensus.view().state.pending.get('5f0c-drain-proj')!.awaiting, ['north-1', 'west-1'], 'this member acked');
  await h.consensus.propose({ type: 'ack_audit', ids: ['5f0c-drain-proj'], member: 'west-1' });
  t.deepEqual(h.consensus.view().state.pending.get('5f0c-drain-proj')!.awaiting, ['north-1']);
  await h.consensus.removeVoter('north-1');
  t.false(h.consensus.view().state.pending.has('5f0c-drain-proj'), 'the voter that left is no longer waited on');
  // The establish sealed a record too: west-1 never acknowledged it, so it alone is still awaited there.
  t.deepEqual([...h.consensus.view().state.pending.values()].map((p) => [p.record.kind, p.awaiting]), [['authority_established', ['west-1']]]);
});

test('the acknowledgement is proposed only after the store write resolved', async (t) => {
  const h = await engineHarness();
  await establish(h.consensus, 'proj', 'east');
  const order: string[] = [];
  const put = h.audit.put.bind(h.audit);
  h.audit.put = async (record) => {
    order.push('store');
    return put(record);
  };
  h.consensus.watch((_v, entry) => {
    if (entry.command.type === 'ack_audit') order.push('ack');
  });
  h.probe.answer('west', 0);
  await h.engine.start(request());
  t.deepEqual(order.slice(0, 2), ['store', 'ack']);
});

test('concurrent projections share acknowledgement entries', async (t) => {
  const h = await engineHarness();
  h.consensus.hold();
  const records = [1, 2, 3].map((i) => ({
    id: `r${i}`, authority: `a${i}`, source: 'east', target: 'west', actor: 'x', reason: '', barrier: 0, epoch: 1, commit_term: 1, commit_index: i,
  }));
  const done = Promise.all(records.map((r) => h.projection.project(r)));
  await h.consensus.whenHeld(1);
  await flushMicrotasks();
  t.is(h.consensus.heldCount, 1, 'the first ack is in consensus; the others wait for it');
  h.consensus.release();
  await done;
  const acks = h.consensus.log().filter((e) => e.command.type === 'ack_audit');
  t.is(acks.length, 2);
  t.deepEqual(acks.map((e) => (e.command as { ids: string[] }).ids), [['r1'], ['r2', 'r3']]);
});

test('a failed projection is retried on a schedule until the store takes it', async (t) => {
  const h = await engineHarness({ voters: ['east-1', 'west-1'] });
  await establish(h.consensus, 'proj', 'east');
  h.probe.answer('west', 1);
  await h.feed.append({ authority: 'proj', operation: 'w', epoch: 1 });
  h.probe.answer('west', 0);
  const run = h.engine.start(request()).catch((e) => e);
  await h.probe.whenProbed(1);
  h.audit.failWith(new StoreUnavailableError('audit', 'down'));
  h.probe.answer('west', 1);
  await h.clock.advanceAsync(200);
  await run;
  t.deepEqual(h.consensus.view().state.pending.get('5f0c-drain-proj')!.awaiting, ['east-1', 'west-1']);
  h.audit.failWith(undefined);
  await h.clock.advanceAsync(2_000);
  await flushMicrotasks();
  t.truthy(await h.audit.byId('5f0c-drain-proj'));
  t.deepEqual(h.consensus.view().state.pending.get('5f0c-drain-proj')!.awaiting, ['west-1']);
});

test('a crash between the store write and the ack leaves only that member pending; the repeat is harmless', async (t) => {
  const h = await engineHarness();
  await establish(h.consensus, 'proj', 'east');
  h.probe.answer('west', 0);
  h.projection.stop();
  const record = (await commitThroughConsensus(h.consensus, request())).result;
  t.true(record.ok);
  const sealed = (record as { record: Parameters<typeof h.audit.put>[0] }).record;
  await h.audit.put(sealed); // stored, then "crashed" before acknowledging
  t.deepEqual(h.consensus.view().state.pending.get(sealed.id)!.awaiting, ['east-1']);
  h.projection.start(); // restart as leader: projects what is pending
  await flushMicrotasks();
  t.is(h.consensus.view().state.pending.size, 0);
  const stored = await h.audit.list('proj');
  t.deepEqual(stored.filter((r) => r.id === sealed.id), [sealed], 'stored once');
  t.deepEqual(stored.map((r) => r.kind), ['planned_transfer', 'authority_established'], "the establish's record, pending since the projection stopped, is stored too");
});
