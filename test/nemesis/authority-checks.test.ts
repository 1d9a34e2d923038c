import test from 'ava';
import {
  checkAuditedEverywhere,
  checkAuthorityHistory,
  checkRefusalsTookNoSerial,
  type AuditRecord,
  type HealedAuthority,
} from './authority/authority-checks.js';
import type { TransferInput, WriteInput, WriteOutput } from './authority/authority-workload.js';
import { OperationLog } from './operation-log.js';

const nodes = [
  { id: 'east-1', datacenter: 'east' },
  { id: 'west-1', datacenter: 'west' },
];
const move: AuditRecord = {
  id: 'move-a0-0',
  authority: 'a0',
  source: 'east',
  target: 'west',
  barrier: 5,
  epoch: 2,
  commit_term: 3,
  commit_index: 40,
};
const healed: Record<string, HealedAuthority> = { a0: { home: 'west', epoch: 2, audit: [move] } };

function write(
  log: OperationLog,
  operation: string,
  member: string,
  epoch: number,
  serial: number,
): void {
  log
    .invoke<WriteInput, WriteOutput>('w0', 'write', { authority: 'a0', operation, epoch, member })
    .ok({ epoch, serial });
}

/** An attempt of `move`'s key, sent at member `at`. */
function invokeMove(log: OperationLog, at = 'east-1') {
  return log.invoke<TransferInput, AuditRecord>('operator', 'transfer', {
    authority: 'a0',
    id: move.id,
    source: 'east',
    target: 'west',
    at,
  });
}

function transfer(log: OperationLog): void {
  invokeMove(log).ok(move);
}

test('a history of writes at the home, a move covering them and writes under the new epoch passes', (t) => {
  const log = new OperationLog();
  write(log, 'w0-0', 'east-1', 1, 1);
  transfer(log);
  write(log, 'w0-1', 'west-1', 2, 1);
  t.deepEqual(checkAuthorityHistory(log, healed, nodes, { a0: 'east' }), []);
});

test('a write beyond the barrier, under an old epoch after the move, or at a member that is not home is reported', (t) => {
  const log = new OperationLog();
  write(log, 'w0-0', 'east-1', 1, 9);
  transfer(log);
  write(log, 'w0-1', 'east-1', 1, 10);
  write(log, 'w0-2', 'east-1', 2, 11);
  const problems = checkAuthorityHistory(log, healed, nodes, { a0: 'east' });
  t.true(
    problems.some(
      (p) =>
        p.includes('w0-0') && p.includes('has barrier 5') && p.includes('missing at the new home'),
    ),
  );
  t.true(
    problems.some((p) => p.includes('w0-1') && p.includes('finalised under epoch 1 after move')),
  );
  t.true(problems.some((p) => p.includes('w0-2') && p.includes('whose home is west')));
});

test('a move committed after a cancel answered 204, or committed twice, is reported', (t) => {
  const log = new OperationLog();
  const pending = invokeMove(log);
  log.invoke('operator', 'cancel', { authority: 'a0', at: 'east-1' }).ok({ status: 204 });
  pending.unknown('no answer in time');
  const twice = {
    a0: {
      home: 'west',
      epoch: 3,
      audit: [move, { ...move, epoch: 3, commit_index: 50, source: 'west' }],
    },
  };
  const problems = checkAuthorityHistory(log, twice, nodes, { a0: 'east' });
  t.true(problems.some((p) => p.includes('answered 204') && p.includes(move.id)));
  t.true(problems.some((p) => p.includes('committed twice')));
});

test('a refused write that took a serial (a gap no unknown write explains) is reported; a gap an unknown write explains is not', (t) => {
  const log = new OperationLog();
  write(log, 'w0-0', 'east-1', 1, 1);
  log
    .invoke<WriteInput, WriteOutput>('w0', 'write', {
      authority: 'a0',
      operation: 'w0-1',
      epoch: 1,
      member: 'east-1',
    })
    .fail('503 authority-frozen');
  write(log, 'w0-2', 'east-1', 1, 3);
  t.deepEqual(checkRefusalsTookNoSerial(log), [
    'east-1: its feed skipped 1 serials below 3 that no acknowledged write holds, but only 0 writes there had an unknown outcome: some of its 1 refused writes took a serial',
  ]);
  log
    .invoke<WriteInput, WriteOutput>('w0', 'write', {
      authority: 'a0',
      operation: 'w0-3',
      epoch: 1,
      member: 'east-1',
    })
    .unknown('no answer in time');
  t.deepEqual(checkRefusalsTookNoSerial(log), []);
});

test('a committed move missing from one member, or a member that did not answer, is reported', (t) => {
  t.deepEqual(
    checkAuditedEverywhere({
      'east-1': { a0: ['move-a0-0', 'move-a0-1'] },
      'west-1': { a0: ['move-a0-0'] },
      'north-1': { a0: undefined },
    }),
    [
      'a0: committed move(s) move-a0-1 not audited on west-1',
      'a0: north-1 did not answer for its audit after healing',
    ],
  );
  t.deepEqual(checkAuditedEverywhere({ 'east-1': { a0: ['m'] }, 'west-1': { a0: ['m'] } }), []);
});

test('a cancel elsewhere answered 204 while every transfer committed, and a key refused at every member yet committed, are reported; a key refused once and committed by its retry is not', (t) => {
  const log = new OperationLog();
  invokeMove(log, 'east-1').fail('409 transfer-conflict');
  invokeMove(log, 'west-1').ok(move);
  log.invoke('operator', 'cancel', { authority: 'a0', at: 'north-1' }).ok({ status: 204 });
  const problems = checkAuthorityHistory(log, healed, nodes, { a0: 'east' });
  t.deepEqual(problems, [
    `a0: a cancel at north-1 answered 204 (released a transfer), yet every transfer asked for before it committed (${move.id}, ${move.id})`,
  ]);
  const refused = new OperationLog();
  invokeMove(refused).fail('409 transfer-released');
  t.true(
    checkAuthorityHistory(refused, healed, nodes, { a0: 'east' }).some((p) =>
      p.includes(`transfer ${move.id} was refused (east-1: 409 transfer-released) but committed`),
    ),
  );
});
