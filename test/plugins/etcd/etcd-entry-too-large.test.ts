import test from 'ava';
import { NotAppendedError } from '@baton/contracts/internal/metadata-consensus.js';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { requestTooLarge } from '@baton/plugin-etcd/internal/etcd-errors.js';
import { outcome, startGroup } from './etcd-fixture.js';

// An entry under maxEntryBytes but over what this etcd takes (--max-request-bytes): etcd refuses
// it before proposing it to its Raft, so the proposal was certainly not appended. It answers so
// at once, rather than retrying the same bytes until its deadline and calling the outcome unknown.

test('an entry etcd refuses for its size is NotAppendedError (invalid_command) at once, and the log goes on', async (t) => {
  t.timeout(60_000);
  const etcd = await EtcdCluster.start({ extraArgs: ['--max-request-bytes=16384'] });
  t.teardown(() => etcd.close());
  // Retried until this deadline, the same bytes would end as OutcomeUnknownError.
  const group = await startGroup(etcd, 1, { proposeTimeoutMs: 20_000 });
  t.teardown(group.stop);
  const [member] = group.members;
  const refused = await outcome(member.propose({ op: 'put', key: 'big', value: 'x'.repeat(40_000) }));
  t.true(refused.error instanceof NotAppendedError, String(refused.error));
  t.is((refused.error as NotAppendedError).reason, 'invalid_command');
  t.regex((refused.error as Error).message, /max-request-bytes/);
  const after = await member.propose({ op: 'put', key: 'small', value: 'y' });
  t.like(after.result, { op: 'put', previous: null });
  t.false('big' in member.view().state.data, 'nothing of the refused entry applied');
});

test('etcd and gRPC size refusals are recognised; other failures are not', (t) => {
  t.true(requestTooLarge(new Error('3 INVALID_ARGUMENT: etcdserver: request is too large')));
  t.true(requestTooLarge(new Error('8 RESOURCE_EXHAUSTED: Received message larger than max (2097152 vs. 2097152)')));
  t.true(requestTooLarge(new Error('8 RESOURCE_EXHAUSTED: Trying to send message larger than max (5000000 vs. 4194304)')));
  t.false(requestTooLarge(new Error('etcdserver: request timed out')));
  t.false(requestTooLarge('a string'));
});
