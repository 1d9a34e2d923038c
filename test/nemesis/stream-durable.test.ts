import { durableNemesisTests } from './durable-nemesis-tests.js';
import { STREAM_DURABLE_KINDS, streamDurableWorkload } from './durable/stream-durable-workload.js';

durableNemesisTests({
  title:
    'streams: kill -9 inside WAL compactions, fs object store puts and Raft snapshot installs, with appenders running: every acknowledged record is read back once at its offset and every killed node serves again',
  workload: streamDurableWorkload,
  kinds: Object.values(STREAM_DURABLE_KINDS),
  mustSucceed: { append: 'some appends were acknowledged' },
});
