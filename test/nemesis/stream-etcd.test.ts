import { nemesisTests } from './nemesis-tests.js';
import { streamWorkload } from './stream/stream-workload.js';

nemesisTests({
  title:
    'streams on etcd: with the metadata on a real etcd cluster, every acknowledged record is read back once, in order, one node acknowledges per stream at a time and every transfer settles after node faults, etcd member kills and nodes cut off from etcd',
  workload: () => streamWorkload('etcd'),
  // One seed in CI (3 stream nodes, 3 etcd members): the Raft variant's seeds cover 5 nodes.
  ciSeeds: [1],
  mustSucceed: {
    append: 'some appends were acknowledged',
    transfer: 'some transfers were accepted',
  },
});
