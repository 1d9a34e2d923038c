import test from 'ava';
import fc from 'fast-check';
import type { TransferIntent } from '@baton/authority-transfer/internal/ownership.js';
import { type CoreEvent, type Effect, type PlanState, TransferCore, transferCoreInvariants } from '@baton/authority-transfer/internal/transfer-core.js';

// The pure core of one planned transfer, alone: events in, effects out, no clock, no network.
// Time only arrives in `tick` events; each transcript reads like the run it stands for.

const FREEZE_BUDGET = 50;

const intent = (over: Partial<TransferIntent> = {}): TransferIntent => ({
  id: 'k1', authority: 'proj', source: 'east', target: 'west', actor: 'ops', reason: 'r', driver: 'west-1',
  sources: [{ member: 'east-1', incarnation: 'i1', barrier: 10 }],
  deadline: 1000, frozen: false, freezes: 0, registered: 3,
  ...over,
});

const frozenIntent = (final = 14) => intent({ frozen: true, freezes: 1, sources: [{ member: 'east-1', incarnation: 'i1', barrier: 10, final }] });

const read = (serial: number, at: number): CoreEvent => ({ type: 'probe_read', readings: [{ serial, replica: 'r1' }], at });

/** A core registered with one source feed whose barrier is 10, at time 0. */
const registered = () => {
  const core = new TransferCore('k1', 1000, { freezeBudgetMs: FREEZE_BUDGET });
  core.step({ type: 'tick', now: 0 });
  core.step({ type: 'applied', intent: intent() });
  return core;
};

/** Takes what the core asks for next. */
const take = (core: TransferCore): Effect[] => {
  const effects = core.ready();
  core.advance();
  return effects;
};

test('a registered core asks to probe the target until its deadline, on the catch-up schedule', (t) => {
  const core = registered();
  t.is(core.state, 'AwaitingCatchUp');
  t.deepEqual(take(core), [{ type: 'probe', until: 1000, schedule: 'catch_up' }]);
  t.deepEqual(core.ready(), [], 'an acknowledged effect is not asked for again without a new event');
});

test('the happy path: probe, freeze, probe the finals, claim and commit', (t) => {
  const core = registered();
  const transcript: [CoreEvent, Effect[], PlanState][] = [
    [read(7, 1), [{ type: 'probe', until: 1000, schedule: 'catch_up' }], 'AwaitingCatchUp'],
    [read(10, 2), [{ type: 'propose', command: 'freeze' }], 'Ready'],
    [{ type: 'proposed', command: 'freeze', outcome: 'applied', at: 3 }, [{ type: 'propose', command: 'freeze' }], 'Ready'],
    [{ type: 'applied', intent: frozenIntent() }, [{ type: 'probe', until: 3 + FREEZE_BUDGET, schedule: 'frozen' }], 'AwaitingCatchUp'],
    [read(14, 5), [{ type: 'propose', command: 'commit' }], 'Ready'],
  ];
  for (const [event, effects, state] of transcript) {
    core.step(event);
    t.is(core.state, state, `after ${event.type}`);
    t.deepEqual(core.ready(), effects, `after ${event.type}`);
  }
  core.advance();
  t.is(core.state, 'Committing', 'taking the commit effect claims the plan');
  t.false(core.step({ type: 'cancel', why: 'too late', cancel: true }), 'a claimed plan cannot be cancelled');
  core.step({ type: 'proposed', command: 'commit', outcome: 'committed' });
  t.is(core.state, 'Committed');
  t.deepEqual(core.ready(), []);
  t.deepEqual(core.violations, []);
});

test('a freeze held past its budget is lifted while the deadline is ahead', (t) => {
  const core = registered();
  core.step(read(10, 1));
  core.step({ type: 'proposed', command: 'freeze', outcome: 'applied', at: 2 });
  core.step({ type: 'applied', intent: frozenIntent() });
  core.step({ type: 'tick', now: 2 + FREEZE_BUDGET });
  t.deepEqual(take(core), [{ type: 'propose', command: 'thaw' }]);
  core.step({ type: 'proposed', command: 'thaw', outcome: 'applied' });
  core.step({ type: 'applied', intent: intent({ freezes: 1 }) });
  t.false(core.frozen);
  t.deepEqual(take(core), [{ type: 'probe', until: 1000, schedule: 'catch_up' }]);
});

test('out of time while reading the target, the core times out: release, then answer 504', (t) => {
  const core = registered();
  core.step(read(3, 1));
  core.step({ type: 'tick', now: 1000 });
  t.is(core.state, 'Abandoned');
  t.deepEqual(take(core), [{ type: 'release', why: 'timed_out' }, { type: 'answer', outcome: 'timed_out' }]);
});

test('a Ready plan on fresh readings is not timed out by a tick: its freeze is still proposed', (t) => {
  const core = registered();
  core.step(read(10, 1));
  core.step({ type: 'tick', now: 2000 });
  t.is(core.state, 'Ready');
  t.deepEqual(core.ready(), [{ type: 'propose', command: 'freeze' }]);
});

test('a cancel ends an unclaimed plan at once and it answers; its commit is never asked for', (t) => {
  const core = registered();
  core.step(read(10, 1));
  t.true(core.step({ type: 'cancel', why: 'cancelled by an administrator', cancel: true }));
  t.is(core.abandonedBecause, 'cancelled by an administrator');
  t.deepEqual(take(core), [{ type: 'answer', outcome: 'ended' }]);
  core.step({ type: 'applied', intent: frozenIntent() });
  core.step(read(14, 2));
  t.is(core.state, 'Abandoned', 'nothing brings a called-off plan back');
  t.deepEqual(core.violations, []);
});

test('a refusal proving nothing committed gives the claim back; an unknown outcome is sticky until resolved', (t) => {
  const core = registered();
  core.step(read(10, 1));
  core.step({ type: 'proposed', command: 'freeze', outcome: 'applied', at: 2 });
  core.step({ type: 'applied', intent: frozenIntent(10) });
  core.step(read(10, 3));
  t.deepEqual(take(core), [{ type: 'propose', command: 'commit' }]);
  core.step({ type: 'proposed', command: 'commit', outcome: 'unknown' });
  t.true(core.unresolved);
  t.is(core.state, 'Committing');
  t.deepEqual(take(core), [{ type: 'propose', command: 'commit' }], 'a claimed plan only ever proposes its commit again');
  core.step({ type: 'proposed', command: 'commit', outcome: 'refused' });
  t.is(core.state, 'Ready');
  t.false(core.unresolved);
});

test('a failed freeze proposal leaves no freeze held, so the plan never claims on it', (t) => {
  const core = registered();
  core.step(read(10, 1));
  core.step({ type: 'proposed', command: 'freeze', outcome: 'applied', at: 2 });
  core.step({ type: 'applied', intent: frozenIntent(10) });
  core.step({ type: 'proposed', command: 'thaw', outcome: 'failed' });
  t.false(core.frozen);
  core.step(read(10, 3));
  t.deepEqual(core.ready(), [{ type: 'propose', command: 'freeze' }]);
});

test('the invariants say what they found broken', (t) => {
  const core = registered();
  core.state = 'Ready';
  t.regex(transferCoreInvariants(core)[0] ?? '', /Ready while the target holds east-1's feed through nothing read, short of 10/);
  core.step(read(10, 1));
  core.state = 'Committing';
  t.deepEqual(transferCoreInvariants(core), ['transfer k1 is Committing without a freeze holding every final serial']);
  t.deepEqual(core.violations, [], 'nothing is recorded until a step finds it');
  core.step({ type: 'tick', now: 2 });
  t.regex(core.violations[0] ?? '', /^after tick: transfer k1 is Committing without a freeze/, 'the first step after it records it');
});

/** Any event a driver could feed, with small serials and times so the interesting cases come up. */
const event: fc.Arbitrary<CoreEvent> = fc.oneof(
  fc.record({ type: fc.constant('probe_read' as const), readings: fc.array(fc.option(fc.record({ serial: fc.nat(16), replica: fc.constantFrom('r1', 'r2') }), { nil: undefined }), { maxLength: 2 }), at: fc.nat(1200) }),
  fc.record({ type: fc.constant('tick' as const), now: fc.nat(1200) }),
  fc.record({ type: fc.constant('cancel' as const), why: fc.constant('cancelled'), cancel: fc.boolean() }),
  fc.record({ type: fc.constant('claim' as const) }),
  fc.record({ type: fc.constant('released' as const), why: fc.constant('failover') }),
  fc.record({ type: fc.constant('source_read' as const), at: fc.nat(1200), ok: fc.boolean() }),
  fc.nat(16).map((final): CoreEvent => ({ type: 'applied', intent: frozenIntent(final) })),
  fc.constant<CoreEvent>({ type: 'applied', intent: intent() }),
  fc.constant<CoreEvent>({ type: 'applied', intent: intent({ sources: [{ member: 'east-1', incarnation: 'i1', barrier: 10 }, { member: 'east-2', incarnation: 'j1', barrier: 4 }] }) }),
  fc.nat(1200).map((at): CoreEvent => ({ type: 'proposed', command: 'freeze', outcome: 'applied', at })),
  fc.constantFrom<CoreEvent>(
    { type: 'proposed', command: 'thaw', outcome: 'applied' },
    { type: 'proposed', command: 'freeze', outcome: 'failed' },
    { type: 'proposed', command: 'thaw', outcome: 'lifted' },
    { type: 'proposed', command: 'commit', outcome: 'refused' },
    { type: 'proposed', command: 'commit', outcome: 'unknown' },
  ),
);

test('property: the core claims only as its own effect says, and no sequence of events breaks its invariants', (t) => {
  fc.assert(
    fc.property(fc.array(fc.tuple(event, fc.boolean()), { maxLength: 60 }), (steps) => {
      const core = registered();
      let cancelledAt: number | undefined;
      for (const [i, [e, takeEffects]] of steps.entries()) {
        // A driver claims only through the commit effect; a bare claim is what the old callers did.
        if (e.type === 'claim' && !(core.state === 'Ready' && core.frozen && core.fresh)) continue;
        if (e.type === 'proposed' && e.command === 'commit' && core.state !== 'Committing') continue;
        const wasCancel = core.step(e) && e.type === 'cancel' && e.cancel === true;
        if (wasCancel) cancelledAt ??= i;
        if (takeEffects) {
          const effects = take(core);
          if (cancelledAt !== undefined) t.false(effects.some((x) => x.type === 'propose' && x.command === 'commit'), 'no commit after a cancel answered 204');
          if (effects.some((x) => x.type === 'propose' && x.command === 'commit')) t.true(core.state === 'Committing' && core.frozen);
        }
        if (cancelledAt !== undefined) t.is(core.state, 'Abandoned');
      }
      t.deepEqual(core.violations, []);
      t.deepEqual(transferCoreInvariants(core), []);
    }),
    { numRuns: 500 },
  );
});
