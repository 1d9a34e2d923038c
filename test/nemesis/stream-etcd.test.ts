import { nemesisTests } from './nemesis-tests.js';
import { streamWorkload } from './stream/stream-workload.js';

nemesisTests({
  title:
    'streams on etcd: with the metadata on a real etcd cluster, every acknowledged record is read back once, in order, one node acknowledges per stream at a time and every transfer settles after node faults, etcd members killed and paused (the etcd leader among them) and nodes cut off from etcd',
  workload: () => streamWorkload('etcd'),
  // One seed in CI (3 stream nodes, 3 etcd members): the Raft variant's seeds cover 5 nodes.
  ciSeeds: [1],
  // The etcd faults first: a CI run of 20 s has time for a few faults of the many kinds.
  firstKinds: ['etcd-pause', 'etcd-kill', 'etcd-cut'],
  mustSucceed: {
    append: 'some appends were acknowledged',
    transfer: 'some transfers were accepted',
  },
});
