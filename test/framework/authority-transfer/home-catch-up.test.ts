import test from 'ava';
import type { OwnershipConsensus } from '@baton/authority-transfer/internal/audit-projection.js';
import type { FeedOrigin } from '@baton/authority-transfer/internal/change-feed.js';
import { HomeCatchUp } from '@baton/authority-transfer/internal/home-catch-up.js';
import type { Ownership, OwnershipCommand, OwnershipState } from '@baton/authority-transfer/internal/ownership.js';
import { restoreOwnership } from '@baton/authority-transfer/internal/ownership-index.js';
import { HomeCatchingUpError } from '@baton/authority-transfer/internal/transfer-errors.js';
import type { Logger } from '@baton/contracts/internal/logger.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';

/** north-1 became home of proj at epoch 2; east-1 recorded its final serial 5 in incarnation i1. */
const moved = (settled: string[] = []): Ownership => ({
  home: 'north',
  epoch: 2,
  catchUp: { finals: [{ member: 'east-1', incarnation: 'i1', serial: 5 }], settled },
});

function setup(options: { state?: () => OwnershipState; homeMembers?: string[] } = {}) {
  const held = new Map<string, number>();
  const replicas = {
    appliedSerial: (origin: FeedOrigin) => held.get(`${origin.member}|${origin.incarnation}`) ?? 0,
    applied: () => ({ incarnation: 'i1', serial: 0, storage: 's1' }),
  };
  const proposed: OwnershipCommand[] = [];
  let failNext = false;
  const pending: (() => void)[] = [];
  const consensus = {
    view: () => ({ state: options.state?.() ?? restoreOwnership({ authorities: [], pending: [], transfers: [] }), applied: { term: 1, index: 1 } }),
    watch: () => () => undefined,
    propose: (command: OwnershipCommand) => {
      proposed.push(command);
      const fail = failNext;
      failNext = false;
      return new Promise((resolve, reject) => pending.push(() => (fail ? reject(new Error('no leader')) : resolve({}))));
    },
  } as unknown as OwnershipConsensus;
  const logged: { level: string; msg: string }[] = [];
  const record = (level: string) => (fields: unknown, msg?: string) => void logged.push({ level, msg: typeof fields === 'string' ? fields : msg ?? '' });
  const log = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') } as unknown as Logger;
  log.child = () => log;
  let refusals = 0;
  let pulls = 0;
  const clock = new VirtualClock();
  const catchUp = new HomeCatchUp('north-1', 'north', replicas, consensus, clock, log, {
    onRefused: () => (refusals += 1),
    onBehind: () => (pulls += 1),
    homeMembers: options.homeMembers,
  });
  const answerProposals = async () => {
    for (const answer of pending.splice(0)) answer();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    catchUp,
    clock,
    held: (serial: number, member = 'east-1') => held.set(`${member}|i1`, serial),
    proposed,
    failNextProposal: () => (failNext = true),
    answerProposals,
    logged,
    counts: () => ({ refusals, pulls }),
  };
}

test('a home short of a final serial refuses with 503 naming the source, asks for a pull, counts it and warns once', (t) => {
  const s = setup();
  s.held(3);
  const error = t.throws(() => s.catchUp.assertHolds('proj', moved()), { instanceOf: HomeCatchingUpError });
  t.like(error, { status: 503, authority: 'proj', epoch: 2, source: 'east-1', barrier: 5, frontier: 3 });
  t.throws(() => s.catchUp.assertHolds('proj', moved()), { instanceOf: HomeCatchingUpError });
  t.deepEqual(s.counts(), { refusals: 2, pulls: 2 });
  t.is(s.catchUp.catchingUp, 1);
  t.is(s.logged.filter((l) => l.level === 'warn').length, 1, 'one warning per authority and epoch, not one per write');
  t.deepEqual(s.proposed, [], 'nothing is settled while short');
});

test('a home that holds every final accepts, settles once while the settle is in flight, and retries a failed settle on a later write', async (t) => {
  const s = setup();
  s.held(3);
  t.throws(() => s.catchUp.assertHolds('proj', moved()));
  s.held(5);
  s.failNextProposal();
  t.notThrows(() => s.catchUp.assertHolds('proj', moved()));
  t.notThrows(() => s.catchUp.assertHolds('proj', moved()));
  t.deepEqual(s.proposed, [{ type: 'settle_catch_up', authority: 'proj', epoch: 2, member: 'north-1' }], 'one settle in flight');
  t.is(s.catchUp.catchingUp, 0);
  t.true(s.logged.some((l) => l.level === 'info' && /caught up/.test(l.msg)), 'the catch-up is logged');
  await s.answerProposals();
  t.notThrows(() => s.catchUp.assertHolds('proj', moved()));
  t.is(s.proposed.length, 2, 'the failed settle is proposed again');
});

test('a settled home and an authority a failover moved are not checked', (t) => {
  const s = setup();
  t.notThrows(() => s.catchUp.assertHolds('proj', moved(['north-1'])), 'north-1 settled: its replica no longer matters');
  t.notThrows(() => s.catchUp.assertHolds('proj', { home: 'north', epoch: 3 }));
  t.throws(() => s.catchUp.assertHolds('proj', moved(['north-2'])), { instanceOf: HomeCatchingUpError }, 'another member settling says nothing of this one');
  t.deepEqual(s.proposed, []);
});

test('on start a member settles the unsettled moves the index lists for its datacenter, with no write; a state a snapshot installed later is looked over again', (t) => {
  // What a restarted member finds in the replicated state: moves to north and to west.
  let state = restoreOwnership({ authorities: [['proj', moved()], ['elsewhere', { ...moved(), home: 'west' }]], pending: [], transfers: [] });
  const s = setup({ state: () => state, homeMembers: ['north-1', 'north-2'] });
  s.held(5);
  s.catchUp.start();
  t.teardown(() => s.catchUp.stop());
  t.deepEqual(s.proposed, [{ type: 'settle_catch_up', authority: 'proj', epoch: 2, member: 'north-1', homeMembers: ['north-1', 'north-2'] }], 'only the move to its own datacenter');

  // A snapshot replaces the state: a move this member never saw apply, which it is short on.
  const lib: Ownership = { home: 'north', epoch: 4, catchUp: { finals: [{ member: 'east-2', incarnation: 'i1', serial: 2 }], settled: [] } };
  state = restoreOwnership({ authorities: [['lib', lib]], pending: [], transfers: [] });
  s.clock.advance(500);
  t.is(s.catchUp.catchingUp, 1, 'it knows it is short with no write');
  t.deepEqual(s.catchUp.shortfalls(), [{ authority: 'lib', epoch: 4, source: 'east-2', incarnation: 'i1', final: 2, held: 0 }]);
  t.is(s.proposed.length, 1);
  s.held(2, 'east-2');
  s.clock.advance(500);
  t.like(s.proposed[1], { type: 'settle_catch_up', authority: 'lib', epoch: 4, member: 'north-1' });
  t.is(s.catchUp.catchingUp, 0);
});
