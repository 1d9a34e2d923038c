import test from 'ava';
import {
  checkAuthorityHistory,
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

function transfer(log: OperationLog): void {
  log
    .invoke<TransferInput, AuditRecord>('operator', 'transfer', {
      authority: 'a0',
      id: move.id,
      source: 'east',
      target: 'west',
      at: 'east-1',
    })
    .ok(move);
}

test('a history of writes at the home, a move covering them and writes under the new epoch passes', (t) => {
  const log = new OperationLog();
  write(log, 'w0-0', 'east-1', 1, 4);
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
  t.true(problems.some((p) => p.includes('w0-0') && p.includes('its barrier is 5')));
  t.true(
    problems.some((p) => p.includes('w0-1') && p.includes('finalised under epoch 1 after move')),
  );
  t.true(problems.some((p) => p.includes('w0-2') && p.includes('whose home is west')));
});

test('a move committed after a cancel answered 204, or committed twice, is reported', (t) => {
  const log = new OperationLog();
  const pending = log.invoke<TransferInput, AuditRecord>('operator', 'transfer', {
    authority: 'a0',
    id: move.id,
    source: 'east',
    target: 'west',
    at: 'east-1',
  });
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
