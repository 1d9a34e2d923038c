import { nemesisTests } from './nemesis-tests.js';
import { streamWorkload } from './stream/stream-workload.js';

nemesisTests({
  title:
    'streams: on real stream nodes every acknowledged record is read back once, in order, one node acknowledges per stream at a time and every transfer settles after kill, pause, partitions, store outages, drains and failovers',
  workload: () => streamWorkload('raft'),
  ciSeeds: [1, 2],
  mustSucceed: {
    append: 'some appends were acknowledged',
    transfer: 'some transfers were accepted',
  },
});
