import { durableNemesisTests } from './durable-nemesis-tests.js';
import {
  AUTHORITY_DURABLE_KINDS,
  authorityDurableWorkload,
} from './durable/authority-durable-workload.js';

durableNemesisTests({
  title:
    "authority: kill -9 inside Raft snapshots and log compactions, fs audit store puts and Raft snapshot installs, with writers running: no acknowledged write is lost from its member's feed or changed, the usual authority checks hold, and every killed member serves again",
  workload: authorityDurableWorkload,
  kinds: Object.values(AUTHORITY_DURABLE_KINDS),
  mustSucceed: { write: 'some writes were acknowledged' },
});
