import { authorityWorkload } from './authority/authority-workload.js';
import { nemesisTests } from './nemesis-tests.js';

nemesisTests({
  title:
    'authority: on real authority nodes no acknowledged write is lost or finalised under an old epoch, and each committed move is audited once on every member, under kill, pause, partitions and audit store outages, with transfers and cancels at random members',
  workload: authorityWorkload,
  ciSeeds: [1, 2],
  mustSucceed: { write: 'some writes were acknowledged', transfer: 'some transfers committed' },
});
