import test from 'ava';
import fc from 'fast-check';
import type { AuditRecord } from '@baton/contracts/internal/audit-store.js';
import { verifyTrail } from '@baton/consensus/internal/audit-chain.js';
import type { StreamCommand } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { AppliedLog } from './metadata-fixture.js';

const NODES = ['a', 'b', 'c'];
const STREAMS = ['s0', 's1', 's2', 's3', 's4'];

/** One ownership step: a command, or settling a stream's pending transfer as its watchers would. */
type Step = { command: StreamCommand } | { settle: string };

const node = fc.constantFrom(...NODES);
const stream = fc.constantFrom(...STREAMS);
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ stream, node: fc.option(node, { nil: undefined }) }).map(({ stream, node }) => ({ command: { type: 'create-stream', stream, ...(node ? { node } : {}), actor: 'olivia' } as StreamCommand })),
  fc.record({ stream, target: node }).map(({ stream, target }) => ({ command: { type: 'transfer', stream, target, actor: 'olivia' } as StreamCommand })),
  stream.map((s) => ({ settle: s })),
  node.map((n) => ({ command: { type: 'drain', node: n, maxInFlight: 1 } as StreamCommand })),
  node.map((n) => ({ command: { type: 'undrain', node: n } as StreamCommand })),
  fc.constant({ command: { type: 'rebalance', maxInFlight: 2 } as StreamCommand }),
  fc.record({ n: node, liveness: fc.constantFrom('Alive', 'Suspect', 'Dead') }).map(({ n, liveness }) => ({ command: { type: 'node-liveness', node: n, liveness, evidence: `${n} judged ${liveness}` } as StreamCommand })),
  node.map((n) => ({ command: { type: 'failover', node: n, force: true, actor: 'olivia' } as StreamCommand })),
);

function run(steps: Step[]): { records: AuditRecord[]; state: StreamMetadata } {
  const log = new AppliedLog().nodes(['a', 3], ['b', 3], ['c', 3]);
  for (const s of steps) {
    if ('command' in s) log.apply(s.command);
    else if (log.state.transfer(s.settle)) {
      const pending = log.state.transfer(s.settle)!;
      const record = log.state.stream(s.settle)!;
      log.apply({ type: 'close', stream: s.settle, node: pending.source, epoch: record.epoch, tail: record.tail, producers: record.producers });
      log.apply({ type: 'complete', stream: s.settle, source: pending.source, target: pending.target, epoch: record.epoch });
    }
  }
  // No member acknowledges here, so the whole trail is still pending in the state.
  const records = [...log.state.auditPendingRecords()]
    .map((p) => p.record)
    .sort((x, y) => x.commit_index - y.commit_index || (x.seq ?? 0) - (y.seq ?? 0));
  return { records, state: log.state };
}

test('any sequence of ownership commands yields a trail whose chain verifies against the replicated anchors', (t) => {
  const property = fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
    const { records, state } = run(steps);
    const verdict = verifyTrail(records, state.auditChain);
    if (!verdict.ok) throw new Error(`chain broken at ${verdict.id}: ${verdict.why}`);
    if (verdict.checked !== records.length) throw new Error(`checked ${verdict.checked} of ${records.length}`);
    if ((state.auditChain.head?.records ?? 0) !== records.length) throw new Error('the chain head counts another number of records');
    if (verdict.behind) throw new Error('a store holding every record is not behind');
  });
  t.notThrows(() => fc.assert(property, { numRuns: 200 }));
});

test('editing any field of any record, or dropping a record, is named by the verify', (t) => {
  const fields = ['actor', 'reason', 'target', 'cause', 'subject', 'epoch'] as const;
  const property = fc.property(
    fc.array(step, { minLength: 10, maxLength: 80 }),
    fc.nat(),
    fc.constantFrom(...fields),
    fc.boolean(),
    (steps, pick, field, drop) => {
      const { records, state } = run(steps);
      fc.pre(records.length > 1);
      const victim = pick % records.length;
      const edited = records.map((r) => ({ ...r }));
      let expected = edited[victim].id;
      if (drop) {
        edited.splice(victim, 1);
        if (victim === edited.length) {
          // The newest record missing looks like a store whose projection is behind: said so, not a break.
          const verdict = verifyTrail(edited, state.auditChain);
          if (!verdict.ok || !verdict.behind) throw new Error(`a store without its newest record should verify as behind: ${JSON.stringify(verdict)}`);
          return;
        }
        // A dropped record shows as the next one's broken link.
        expected = edited[victim].id;
      } else if (field === 'epoch') edited[victim].epoch += 1;
      else edited[victim][field] = `${String(edited[victim][field] ?? '')}!`;
      const verdict = verifyTrail(edited, state.auditChain);
      if (verdict.ok) throw new Error(`the edit of ${records[victim].id} went unnoticed`);
      if (verdict.id !== expected) throw new Error(`verify named ${verdict.id}, expected ${expected}`);
    },
  );
  t.notThrows(() => fc.assert(property, { numRuns: 200 }));
});
