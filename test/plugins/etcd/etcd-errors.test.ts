import test from 'ava';
import { certainlyNotSent } from '@baton/plugin-etcd/internal/etcd-errors.js';
import { LogKeys, prefixEnd } from '@baton/plugin-etcd/internal/log-keys.js';

test('only failures before the request left (or before etcd proposed it) count as not sent', (t) => {
  const notSent = [
    '14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:2379',
    '4 DEADLINE_EXCEEDED: Deadline exceeded after 1.0s,name resolution: 0.1s,Waiting for LB pick',
    'etcdserver: too many requests',
  ];
  const maybeSent = [
    '14 UNAVAILABLE: Connection dropped',
    '4 DEADLINE_EXCEEDED: Deadline exceeded after 1.0s,LB pick: 0.001s,remote_addr=127.0.0.1:2379',
    'etcdserver: request timed out',
    'etcdserver: leader changed',
    '13 INTERNAL: Received RST_STREAM with code 2',
  ];
  for (const message of notSent) t.true(certainlyNotSent(new Error(message)), message);
  for (const message of maybeSent) t.false(certainlyNotSent(new Error(message)), message);
  t.false(certainlyNotSent('a string'), 'a non-error is not known to be unsent');
});

test('log keys sort in log order and the range end closes the prefix', (t) => {
  const keys = new LogKeys('dep/');
  const sorted = [keys.entry(10), keys.entry(9), keys.entry(100)].sort();
  t.deepEqual(sorted, [keys.entry(9), keys.entry(10), keys.entry(100)]);
  t.is(keys.seqOf(keys.entry(42)), 42);
  t.is(keys.seqOf('dep/log/abc'), undefined);
  t.is(keys.seqOf('dep/head'), undefined);
  t.is(prefixEnd('dep/log/').toString(), 'dep/log0');
  t.deepEqual(prefixEnd('a\u00ff'), Buffer.from([0x61, 0xc3, 0xc0]));
  t.throws(() => keys.entry(-1), { instanceOf: RangeError });
});
