import { nemesisTests } from './nemesis-tests.js';
import { registerWorkload } from './register/register-workload.js';

nemesisTests({
  title:
    'consensus: a register on real Raft processes stays linearizable and converges under kill, pause and partitions',
  workload: registerWorkload,
  ciSeeds: [1, 2],
  mustSucceed: { get: 'some reads succeeded', put: 'some writes succeeded' },
});
