import test from 'ava';
import {
  NotAppendedError,
  OutcomeUnknownError,
  type Receipt,
} from '@baton/contracts/internal/metadata-consensus.js';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import type { KvResult } from '@baton/conformance/internal/kv-state-machine.js';
import { EntryLedger } from './entry-ledger.js';
import { eventually, makeMember, outcome, startGroup } from './etcd-fixture.js';

test('restarting the only etcd member: proposals in doubt end typed, retries with their key settle them, watches resume without a gap or a repeat', async (t) => {
  const cluster = await EtcdCluster.start({ size: 1 });
  t.teardown(() => cluster.close());
  const group = await startGroup(cluster, 2);
  t.teardown(() => group.stop());
  const [a, b] = group.members;
  const ledgers = group.members.map((member) => new EntryLedger(member));

  for (let n = 0; n < 10; n++) await a.propose({ op: 'put', key: 'k', value: `before-${n}` });

  // In flight when etcd dies: each may or may not have landed.
  const inFlight = Array.from({ length: 8 }, (_, n) =>
    outcome(
      (n % 2 === 0 ? a : b).propose(
        { op: 'put', key: 'k', value: `flight-${n}` },
        { idempotencyKey: `flight-${n}`, timeoutMs: 3_000 },
      ),
    ),
  );
  await cluster.member(0).kill();
  // Sent while etcd is down: nothing can reach it, so these are certainly not appended.
  const whileDown = Array.from({ length: 4 }, (_, n) =>
    outcome(
      b.propose(
        { op: 'put', key: 'k', value: `down-${n}` },
        { idempotencyKey: `down-${n}`, timeoutMs: 2_000 },
      ),
    ),
  );
  const downResults = await Promise.all(whileDown);
  const flightResults = await Promise.all(inFlight);
  t.false(cluster.member(0).running, 'etcd stayed down while the proposals settled');
  for (const result of downResults) {
    t.true(
      result.error instanceof NotAppendedError,
      `a proposal made while etcd is down is not appended, got ${String(result.error ?? 'a receipt')}`,
    );
    t.is((result.error as NotAppendedError).reason, 'no_leader');
  }
  for (const result of flightResults) {
    t.true(
      result.value !== undefined ||
        result.error instanceof NotAppendedError ||
        result.error instanceof OutcomeUnknownError,
      `a proposal in flight ends with a receipt or a typed error, got ${String(result.error)}`,
    );
  }
  await t.throwsAsync(a.read({ timeoutMs: 500 }), { message: /linearizable read unavailable/ });

  await cluster.member(0).start();

  // Retrying with the same keys settles every one, exactly once.
  const settled = new Map<string, Receipt<KvResult>>();
  for (const [i, result] of [...flightResults, ...downResults].entries()) {
    const value = i < flightResults.length ? `flight-${i}` : `down-${i - flightResults.length}`;
    const retry = await b.propose({ op: 'put', key: 'k', value }, { idempotencyKey: value });
    if (result.value) {
      t.deepEqual(retry, { ...result.value, replayed: true }, `${value} replays its decision`);
    }
    if (result.error instanceof NotAppendedError) {
      t.false(retry.replayed, `${value} was not appended before, so the retry is the decision`);
    }
    settled.set(value, retry);
  }

  // The watch resumed on both members: a write on one reaches the other's watcher.
  const after = await a.propose({ op: 'put', key: 'k', value: 'after-restart' });
  await eventually(
    () => ledgers.every((ledger) => ledger.values().includes('after-restart')),
    'both watchers see the write made after the restart',
  );
  const expected = 10 + settled.size + 1;
  for (const [i, ledger] of ledgers.entries()) {
    const values = ledger.values();
    t.is(values.length, expected, `member ${i} saw every entry once`);
    t.is(new Set(values).size, values.length, `member ${i} saw no entry twice`);
    t.true(ledger.inOrder());
    t.deepEqual(values, ledgers[0].values());
  }
  t.deepEqual(ledgers[0].entries.at(-1)?.position, after.position);

  // A member reading the log from scratch agrees with the ones that lived through the restart.
  const fresh = makeMember(cluster.endpoints, group.prefix, 'fresh');
  await fresh.start();
  t.teardown(() => fresh.stop());
  t.deepEqual((await fresh.read()).state, a.view().state);
  t.is(a.view().state.commandsApplied, expected);
});
