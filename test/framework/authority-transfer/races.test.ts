import test from 'ava';
import fc from 'fast-check';
import type { FrontierProbe } from '@baton/authority-transfer/internal/frontier-probe.js';
import { AuditProjection } from '@baton/authority-transfer/internal/audit-projection.js';
import { TransferDriver as PlannedTransferEngine } from '@baton/authority-transfer/internal/transfer-driver.js';
import { TransferCancelledError, TransferCommittedError, TransferCommittingError } from '@baton/authority-transfer/internal/transfer-errors.js';
import { engineHarness, establish, request, settle, type OwnershipLocalConsensus } from './harness.js';

/** Every probe answer and consensus proposal becomes a step the scheduler orders. */
function scheduled(s: fc.Scheduler, h: Awaited<ReturnType<typeof engineHarness>>) {
  const probe: FrontierProbe = {
    probe: (_target, _origin, options) =>
      s.schedule(Promise.resolve(1), 'probe answers').then((serial) => {
        options.signal.throwIfAborted();
        return { serial, replica: 'west-1' };
      }),
  };
  const inner = h.consensus;
  const consensus = Object.create(inner) as OwnershipLocalConsensus;
  consensus.propose = (command, options) =>
    s.schedule(Promise.resolve(), `propose ${command.type}`).then(() => inner.propose(command, options));
  const projection = new AuditProjection(consensus, h.audit, h.clock, h.log);
  const engine = new PlannedTransferEngine({ ...h, consensus, projection, probe });
  return { engine, consensus };
}

function committedMoves(h: Awaited<ReturnType<typeof engineHarness>>): number {
  return h.consensus.log().filter((e) => e.command.type === 'commit_planned_transfer' && e.result.ok).length;
}

test('cancel versus commit resolves to exactly one of the two, under every interleaving', async (t) => {
  const seen = { committed: 0, cancelled: 0 };
  await fc.assert(
    fc.asyncProperty(fc.scheduler(), fc.integer({ min: 0, max: 3 }), async (s, cancelAfterSteps) => {
      const h = await engineHarness();
      await establish(h.consensus, 'proj', 'east');
      await h.feed.append({ authority: 'proj', operation: 'w', epoch: 1 });
      const { engine } = scheduled(s, h);
      const run = settle(engine.start(request()));
      let chain: Promise<unknown> = Promise.resolve();
      for (let i = 0; i < cancelAfterSteps; i++) chain = chain.then(() => s.schedule(Promise.resolve(), 'delay'));
      const cancel = settle(chain.then(() => engine.cancel('proj')));
      const [r, c] = await s.waitFor(Promise.all([run, cancel]));
      const moves = committedMoves(h);
      const stored = await h.audit.byId('5f0c-drain-proj');
      if (r.ok) {
        // Committed: the cancel was refused (committing or committed), and the move and audit exist.
        if (c.ok) return false;
        if (!(c.error instanceof TransferCommittingError || c.error instanceof TransferCommittedError)) return false;
        seen.committed++;
        return moves === 1 && stored !== undefined && h.consensus.view().state.authorities.get('proj')!.home === 'west';
      }
      // Cancelled: the cancel answered 204, the run 409, nothing moved and no audit.
      seen.cancelled++;
      return (
        c.ok &&
        r.error instanceof TransferCancelledError &&
        moves === 0 &&
        stored === undefined &&
        h.consensus.view().state.authorities.get('proj')!.home === 'east'
      );
    }),
    { numRuns: 200 },
  );
  // Both outcomes must actually occur, or the property did not explore the race at all.
  t.true(seen.committed > 0, 'some interleavings commit');
  t.true(seen.cancelled > 0, 'some interleavings cancel');
});

test('duplicate requests under one key collapse to one move, under every interleaving', async (t) => {
  let runsChecked = 0;
  await fc.assert(
    fc.asyncProperty(fc.scheduler(), fc.integer({ min: 2, max: 4 }), async (s, copies) => {
      const h = await engineHarness();
      await establish(h.consensus, 'proj', 'east');
      await h.feed.append({ authority: 'proj', operation: 'w', epoch: 1 });
      const { engine } = scheduled(s, h);
      const runs: Promise<Awaited<ReturnType<typeof settle>>>[] = [];
      for (let i = 0; i < copies; i++) {
        runs.push(settle(s.schedule(Promise.resolve(), `request ${i}`).then(() => engine.start(request()))));
      }
      const outcomes = await s.waitFor(Promise.all(runs));
      if (!outcomes.every((o) => o.ok)) return false;
      const records = outcomes.map((o) => JSON.stringify((o as { value: unknown }).value));
      runsChecked++;
      return new Set(records).size === 1 && committedMoves(h) === 1 && h.consensus.view().state.authorities.get('proj')!.epoch === 2;
    }),
    { numRuns: 200 },
  );
  t.is(runsChecked, 200, 'every run reached its assertions');
});
