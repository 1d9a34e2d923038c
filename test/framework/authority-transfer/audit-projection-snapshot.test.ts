import test from 'ava';
import { emptyOwnershipState } from '@baton/authority-transfer/internal/ownership-index.js';
import {
  AuditProjection,
  type OwnershipConsensus,
} from '@baton/authority-transfer/internal/audit-projection.js';
import type {
  OwnershipCommand,
  OwnershipState,
} from '@baton/authority-transfer/internal/ownership.js';
import type { AuditRecord } from '@baton/contracts/internal/audit-store.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { MemoryAuditStore } from '@baton/plugin-memory/internal/memory-audit-store.js';

const record: AuditRecord = {
  id: 'k22',
  authority: 'proj',
  source: 'north',
  target: 'east',
  actor: 'olivia',
  reason: 'drain north',
  barrier: 1,
  epoch: 5,
  commit_term: 7,
  commit_index: 56,
};

/**
 * A follower whose state jumps as an installed snapshot makes it jump: no apply is watched, no
 * leadership changes. Proposals are recorded and answered.
 */
function followerCaughtUpBySnapshot() {
  const state: OwnershipState = emptyOwnershipState();
  const proposed: OwnershipCommand[] = [];
  const consensus = {
    view: () => ({ state, applied: { term: 7, index: 50 } }),
    watch: () => () => undefined,
    onLeadership: () => () => undefined,
    leadership: () => ({ self: 'north-1', isLeader: false, leader: 'west-1', term: 7 }),
    propose: async (command: OwnershipCommand) => {
      proposed.push(command);
      return {
        position: { term: 7, index: 70 },
        result: { ok: true, released: [], unknown: [] },
        replayed: false,
      };
    },
  } as unknown as OwnershipConsensus;
  return { state, proposed, consensus };
}

test('a record a member owes that arrives in an installed snapshot is still projected and acknowledged, with no commit to watch', async (t) => {
  const clock = new VirtualClock();
  const audit = new MemoryAuditStore();
  const { state, proposed, consensus } = followerCaughtUpBySnapshot();
  const projection = new AuditProjection(consensus, audit, clock, createSilentLogger(), {
    sweepIntervalMs: 1_000,
  });
  projection.start();
  await clock.advanceAsync(10);
  // The snapshot lands: the commit of k22 (awaiting this member) was never applied here.
  state.pending.set('k22', { record, awaiting: ['north-1'] });
  await clock.advanceAsync(1_000);
  t.deepEqual(await audit.byId('k22'), record, 'stored in this member audit');
  t.deepEqual(
    proposed,
    [{ type: 'ack_audit', ids: ['k22'], member: 'north-1' }],
    'then acknowledged',
  );
  projection.stop();
});
