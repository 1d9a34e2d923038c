import test from 'ava';
import {
  NotAppendedError,
  OutcomeUnknownError,
} from '@baton/contracts/internal/metadata-consensus.js';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { etcdLeaderIndex } from '../../hosts/etcd-leader.js';
import { EntryLedger } from './entry-ledger.js';
import { eventually, makeMember, startGroup } from './etcd-fixture.js';

test('killing the etcd leader of three mid-run: proposals keep committing, none lost or repeated', async (t) => {
  const cluster = await EtcdCluster.start({ size: 3 });
  t.teardown(() => cluster.close());
  const group = await startGroup(cluster, 3);
  t.teardown(() => group.stop());
  const ledgers = group.members.map((member) => new EntryLedger(member));

  // Writers on every member, each value proposed under its own key and retried with that key
  // until it is decided: an acknowledged value must be in the log once, whatever etcd went through.
  const acknowledged = new Set<string>();
  const failures: string[] = [];
  let killed = false;
  const writer = async (w: number) => {
    const member = group.members[w % group.members.length];
    for (let n = 0; n < 40; n++) {
      const value = `w${w}-${n}`;
      for (let attempt = 0; ; attempt++) {
        try {
          await member.propose({ op: 'put', key: `w${w}`, value }, { idempotencyKey: value });
          acknowledged.add(value);
          break;
        } catch (error) {
          if (!(error instanceof NotAppendedError || error instanceof OutcomeUnknownError))
            throw error;
          failures.push(`${value}: ${error.message}`);
          if (attempt > 20) throw error;
        }
      }
      if (w === 0 && n === 10 && !killed) {
        killed = true;
        await cluster.member(await etcdLeaderIndex(cluster.endpoints)).kill();
      }
    }
  };
  await Promise.all([0, 1, 2, 3, 4, 5].map(writer));

  t.true(killed);
  t.is(acknowledged.size, 6 * 40, 'every value was decided in the end');
  t.log(`${failures.length} attempts failed and were retried with their key`);
  await eventually(
    () => ledgers.every((ledger) => ledger.entries.length >= acknowledged.size),
    'every member applies every decided value',
  );
  for (const [i, ledger] of ledgers.entries()) {
    const values = ledger.values();
    t.is(new Set(values).size, values.length, `member ${i} saw no value twice`);
    t.deepEqual(
      [...values].sort(),
      [...acknowledged].sort(),
      `member ${i} saw every acknowledged value`,
    );
    t.true(ledger.inOrder(), `member ${i} saw the log in order`);
    t.deepEqual(values, ledgers[0].values(), `member ${i} saw the same log as member 0`);
    t.is(group.members[i].view().state.commandsApplied, acknowledged.size);
  }

  // A member started now reads the same log from etcd (two members of three still serve it).
  const late = makeMember(cluster.endpoints, group.prefix, 'late');
  await late.start();
  t.teardown(() => late.stop());
  const read = await late.read();
  t.deepEqual(read.state, group.members[0].view().state);
});
