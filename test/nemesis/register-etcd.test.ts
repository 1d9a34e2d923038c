import { nemesisTests } from './nemesis-tests.js';
import { registerWorkload } from './register/register-workload.js';

nemesisTests({
  title:
    'consensus on etcd: a register kept in a real 3-member etcd stays linearizable and converges under member kills and pauses, etcd member kills and pauses and members cut off from etcd',
  workload: () => registerWorkload('etcd'),
  // One seed in CI (3 members on 3 etcd members): the Raft variant's seeds cover 5 members.
  ciSeeds: [1],
  // The etcd faults first: a CI run of 20 s has time for a few faults of the many kinds.
  firstKinds: ['etcd-pause', 'etcd-kill', 'etcd-cut'],
  mustSucceed: { get: 'some reads succeeded', put: 'some writes succeeded' },
});
