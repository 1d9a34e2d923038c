import { deepStrictEqual, ok } from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import type { ApplyContext, StateCapture } from '@baton/contracts/internal/metadata-consensus.js';
import { ABANDONED_PER_AUTHORITY, type OwnershipCommand, type OwnershipState } from '@baton/authority-transfer/internal/ownership.js';
import { snapshotOwnership } from '@baton/authority-transfer/internal/ownership-index.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import { verifyTrail } from '@baton/consensus';
import type { AuditRecord } from '@baton/contracts';

const machine = new OwnershipStateMachine();

// Ids that are Object.prototype members on purpose: they must be ordinary ids everywhere.
const AUTHORITIES = ['proj', 'constructor', '__proto__'];
const DATACENTERS = ['east', 'west', 'north'];
const MEMBERS = ['east-1', 'east-2', 'west-1', 'north-1'];
const TRANSFER_IDS = ['k1', 'k2', 'k3', 'hasOwnProperty'];

type Step =
  | { kind: 'failover'; authority: number; target: number; expect: boolean }
  | { kind: 'register'; id: number; authority: number; target: number; driver: number; sources: number }
  | { kind: 'freeze'; authority: number }
  | { kind: 'final'; authority: number; member: number; serial: number; newIncarnation: boolean }
  | { kind: 'ready'; authority: number }
  | { kind: 'thaw'; authority: number }
  | { kind: 'release'; authority: number }
  | { kind: 'abandon-fresh'; authority: number }
  | { kind: 'commit'; authority: number }
  | { kind: 'ack'; member: number; all: boolean }
  | { kind: 'settle'; authority: number; member: number; home: number }
  | { kind: 'settle-home' }
  | { kind: 'voters'; keep: number }
  | { kind: 'snapshot-restore' }
  | { kind: 'capture-assemble' }
  | { kind: 'capture-later' };

const a = fc.nat({ max: AUTHORITIES.length - 1 });
const dc = fc.nat({ max: DATACENTERS.length - 1 });
const member = fc.nat({ max: MEMBERS.length - 1 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('failover' as const), authority: a, target: dc, expect: fc.boolean() }),
  fc.record({ kind: fc.constant('register' as const), id: fc.nat({ max: TRANSFER_IDS.length - 1 }), authority: a, target: dc, driver: member, sources: fc.integer({ min: 1, max: 2 }) }),
  fc.record({ kind: fc.constant('freeze' as const), authority: a }),
  fc.record({ kind: fc.constant('final' as const), authority: a, member, serial: fc.nat({ max: 50 }), newIncarnation: fc.boolean() }),
  fc.record({ kind: fc.constant('final' as const), authority: a, member, serial: fc.nat({ max: 50 }), newIncarnation: fc.constant(false) }),
  fc.record({ kind: fc.constant('ready' as const), authority: a }),
  fc.record({ kind: fc.constant('ready' as const), authority: a }),
  fc.record({ kind: fc.constant('thaw' as const), authority: a }),
  fc.record({ kind: fc.constant('release' as const), authority: a }),
  fc.record({ kind: fc.constant('abandon-fresh' as const), authority: a }),
  fc.record({ kind: fc.constant('commit' as const), authority: a }),
  fc.record({ kind: fc.constant('commit' as const), authority: a }),
  fc.record({ kind: fc.constant('register' as const), id: fc.nat({ max: TRANSFER_IDS.length - 1 }), authority: a, target: dc, driver: member, sources: fc.integer({ min: 1, max: 2 }) }),
  fc.record({ kind: fc.constant('ack' as const), member, all: fc.boolean() }),
  fc.record({ kind: fc.constant('ack' as const), member, all: fc.boolean() }),
  fc.record({ kind: fc.constant('settle' as const), authority: a, member, home: fc.nat({ max: 3 }) }),
  fc.record({ kind: fc.constant('settle' as const), authority: a, member, home: fc.nat({ max: 3 }) }),
  fc.constant({ kind: 'settle-home' as const }),
  fc.record({ kind: fc.constant('voters' as const), keep: fc.nat({ max: 15 }) }),
  fc.constant({ kind: 'snapshot-restore' as const }),
  fc.constant({ kind: 'capture-assemble' as const }),
  fc.constant({ kind: 'capture-later' as const }),
);

/** How much of the interesting ground the runs covered, so the property cannot pass vacuously. */
const chained = { records: 0, kinds: new Set<string>() };
const reached = { commits: 0, acksReleasing: 0, restoresMidTransfer: 0, frozenCapturesChecked: 0, settledByEveryMember: 0, unsettledRestored: 0, abandonedRestored: 0, abandonedAtBound: 0 };

class Log {
  state: OwnershipState = machine.initial();
  index = 0;
  voters = ['east-1', 'west-1', 'north-1'];
  /** Captures taken earlier, with what the state was then: checked at the end of the run. */
  captures: { capture: StateCapture; then: unknown }[] = [];

  /** authority -> every record sealed for it, oldest first: what its audit store would hold. */
  sealed = new Map<string, AuditRecord[]>();

  apply(command: OwnershipCommand) {
    this.index += 1;
    const result = machine.apply(this.state, command, this.ctx());
    // A new seal is the record this entry made (a replayed commit answers an older one).
    const record = result.ok && 'record' in result ? result.record : undefined;
    if (record && record.commit_index === this.index) {
      if (!this.sealed.has(record.authority)) this.sealed.set(record.authority, []);
      this.sealed.get(record.authority)!.push(record);
    }
    return result;
  }

  ctx(): ApplyContext {
    return { position: { term: 1, index: this.index }, voters: this.voters };
  }
}

function assemble(capture: StateCapture): OwnershipState {
  const assembly = machine.assemble();
  for (const piece of capture.pieces()) assembly.add(JSON.parse(JSON.stringify(piece)));
  return assembly.finish();
}

function run(log: Log, s: Step): void {
  const state = log.state;
  const authorityOf = (i: number) => AUTHORITIES[i];
  const intentOf = (i: number) => state.transfers.get(authorityOf(i));
  switch (s.kind) {
    case 'failover': {
      const current = state.authorities.get(authorityOf(s.authority));
      log.apply({
        type: 'transfer_authority',
        authority: authorityOf(s.authority),
        target: DATACENTERS[s.target],
        // Guarded by the home it saw, as a failover is (FailoverCommands): sealed as one.
        ...(s.expect && current ? { expectedSource: current.home, failover: true as const } : {}),
      });
      return;
    }
    case 'register': {
      // An authority not established yet is first established (a registration needs a home).
      if (!state.authorities.has(authorityOf(s.authority))) log.apply({ type: 'transfer_authority', authority: authorityOf(s.authority), target: 'east' });
      const home = state.authorities.get(authorityOf(s.authority))!.home;
      const sourceMembers = MEMBERS.filter((m) => m.startsWith(home)).slice(0, s.sources);
      log.apply({
        type: 'register_transfer',
        id: TRANSFER_IDS[s.id],
        authority: authorityOf(s.authority),
        source: home,
        target: DATACENTERS[s.target],
        actor: 'olivia',
        reason: 'drain',
        driver: MEMBERS[s.driver],
        sources: (sourceMembers.length > 0 ? sourceMembers : [MEMBERS[0]]).map((m) => ({ member: m, incarnation: 'i1', serial: 3 })),
        deadline: 1_000,
      });
      return;
    }
    case 'freeze': {
      const intent = intentOf(s.authority);
      if (intent) log.apply({ type: 'freeze_transfer', id: intent.id, authority: intent.authority, thawBy: 2_000 });
      return;
    }
    case 'final': {
      const intent = intentOf(s.authority);
      if (!intent) return;
      // Mostly a source member (the useful case), sometimes another one (refused).
      const cursor = intent.sources[s.member % intent.sources.length];
      const who = s.member === MEMBERS.length - 1 ? MEMBERS[s.member] : cursor.member;
      log.apply({
        type: 'record_final',
        id: intent.id,
        authority: intent.authority,
        member: who,
        incarnation: s.newIncarnation ? 'i2' : cursor.incarnation,
        serial: s.serial,
        freeze: intent.freezes,
      });
      return;
    }
    case 'ready': {
      // What a driver does once the target reached the barrier: freeze, then every source's final.
      let intent = intentOf(s.authority);
      if (!intent) return;
      if (!intent.frozen) log.apply({ type: 'freeze_transfer', id: intent.id, authority: intent.authority, thawBy: 2_000 });
      intent = intentOf(s.authority)!;
      for (const cursor of intent.sources) {
        log.apply({ type: 'record_final', id: intent.id, authority: intent.authority, member: cursor.member, incarnation: cursor.incarnation, serial: 7, freeze: intent.freezes });
      }
      return;
    }
    case 'thaw': {
      const intent = intentOf(s.authority);
      if (intent) log.apply({ type: 'thaw_transfer', id: intent.id, authority: intent.authority });
      return;
    }
    case 'release':
      log.apply({ type: 'release_transfer', authority: authorityOf(s.authority), why: 'cancelled' });
      return;
    case 'abandon-fresh': {
      // A key never used before, registered and called off: what fills an authority's bound.
      const home = state.authorities.get(authorityOf(s.authority))?.home;
      if (!home || state.transfers.has(authorityOf(s.authority))) return;
      const id = `fresh-${log.index}`;
      const target = DATACENTERS.find((d) => d !== home)!;
      log.apply({ type: 'register_transfer', id, authority: authorityOf(s.authority), source: home, target, actor: 'olivia', reason: 'drain', driver: MEMBERS[0], sources: [{ member: MEMBERS[0], incarnation: 'i1', serial: 1 }], deadline: 1_000 });
      log.apply({ type: 'release_transfer', authority: authorityOf(s.authority), id, why: 'timed_out' });
      return;
    }
    case 'commit': {
      const intent = intentOf(s.authority);
      if (!intent) return;
      const result = log.apply({
        type: 'commit_planned_transfer',
        id: intent.id,
        authority: intent.authority,
        source: intent.source,
        target: intent.target,
        actor: intent.actor,
        reason: intent.reason,
        barrier: 0,
      });
      if (result.ok) reached.commits += 1;
      return;
    }
    case 'ack': {
      const pending = [...state.pending.values()];
      if (pending.length === 0) return;
      // Mostly a member the first record awaits (progress), sometimes any member (often a no-op).
      const awaiting = pending[0].awaiting;
      const who = s.member === 0 ? MEMBERS[s.member] : awaiting[s.member % awaiting.length];
      const ids = s.all ? [...pending.map((p) => p.record.id), 'unknown-id'] : [pending[0].record.id];
      const result = log.apply({ type: 'ack_audit', member: who, ids });
      if (result.ok && 'released' in result && result.released.length > 0) reached.acksReleasing += 1;
      return;
    }
    case 'settle': {
      // A member of the new home held the finals its move recorded (a record a capture may share).
      const current = state.authorities.get(authorityOf(s.authority));
      if (!current) return;
      // The home's members as the settler's roster lists them: none (an older member), the settler
      // alone, or the settler and another (so some settles leave the move unsettled by the list).
      // Mostly a member of the home (the useful case), sometimes any member.
      const ofHome = MEMBERS.filter((m) => m.startsWith(current.home));
      const who = s.member > 0 && ofHome.length > 0 ? ofHome[s.member % ofHome.length] : MEMBERS[s.member];
      const other = MEMBERS[(MEMBERS.indexOf(who) + 1) % MEMBERS.length];
      const homeMembers = [undefined, [who], [who, other], [other]][s.home];
      const result = log.apply({ type: 'settle_catch_up', authority: authorityOf(s.authority), epoch: current.epoch, member: who, ...(homeMembers ? { homeMembers } : {}) });
      if (result.ok && 'done' in result && result.done && current.catchUp && !current.catchUp.done) reached.settledByEveryMember += 1;
      return;
    }
    case 'settle-home': {
      // Every member of the home of a move still unsettled settles, each naming them all: the
      // path a healthy home takes, reached here on purpose rather than by the chance of 'settle'.
      const [home, authorities] = [...state.unsettledByHome][0] ?? [];
      if (!home || !authorities) return;
      const authority = [...authorities][0];
      const members = MEMBERS.filter((m) => m.startsWith(home));
      for (const who of members) {
        const current = state.authorities.get(authority)!;
        const result = log.apply({ type: 'settle_catch_up', authority, epoch: current.epoch, member: who, homeMembers: members });
        if (result.ok && 'done' in result && result.done && current.catchUp && !current.catchUp.done) reached.settledByEveryMember += 1;
      }
      return;
    }
    case 'voters': {
      // A membership change: some voters leave (their audit obligations go), others join.
      log.voters = MEMBERS.filter((_, i) => (s.keep >> i) & 1);
      log.index += 1;
      machine.membershipChanged(state, log.ctx());
      return;
    }
    case 'snapshot-restore':
      if (state.transfers.size > 0) reached.restoresMidTransfer += 1;
      if (state.unsettledByHome.size > 0) reached.unsettledRestored += 1;
      if (state.abandoned.size > 0) reached.abandonedRestored += 1;
      log.state = machine.restore(JSON.parse(JSON.stringify(machine.snapshot(state))));
      return;
    case 'capture-assemble':
      if (state.transfers.size > 0) reached.restoresMidTransfer += 1;
      if (state.unsettledByHome.size > 0) reached.unsettledRestored += 1;
      if (state.abandoned.size > 0) reached.abandonedRestored += 1;
      log.state = assemble(machine.capture(state));
      return;
    case 'capture-later':
      log.captures.push({ capture: machine.capture(state), then: structuredClone(snapshotOwnership(state)) });
      return;
  }
}

const sorted = (values: Iterable<string>) => [...values].sort();

/** The indexes as the state keeps them, in a comparable form (key -> sorted members). */
function indexForm(index: Map<string, Set<string>>): Record<string, string[]> {
  const form: Record<string, string[]> = {};
  for (const key of sorted(index.keys())) form[`=${key}`] = sorted(index.get(key)!);
  return form;
}

/** authority -> its release indexes in ascending order (the order the index must keep them in). */
function releasesByAuthority(pairs: [string, number][]): Record<string, number[]> {
  const form: Record<string, number[]> = {};
  for (const [authority, released] of pairs) (form[`=${authority}`] ??= []).push(released);
  for (const releases of Object.values(form)) releases.sort((x, y) => x - y);
  return form;
}

/** The same indexes counted from the primary records alone. */
function recount(state: OwnershipState) {
  const group = (pairs: [string, string][]) => {
    const map = new Map<string, Set<string>>();
    for (const [key, value] of pairs) {
      if (!map.has(key)) map.set(key, new Set());
      map.get(key)!.add(value);
    }
    return indexForm(map);
  };
  const intents = [...state.transfers.values()];
  return {
    pendingByAuthority: group([...state.pending.values()].map((p) => [p.record.authority, p.record.id])),
    transfersBySource: group(intents.map((i) => [i.source, i.authority])),
    transfersByTarget: group(intents.map((i) => [i.target, i.authority])),
    transfersByDriver: group(intents.map((i) => [i.driver, i.authority])),
    transfersById: Object.fromEntries(sorted(intents.map((i) => `${i.id}=${i.authority}`)).map((pair) => pair.split('='))),
    // A planned move's requirement that not every member its last settler named has settled.
    unsettledByHome: group([...state.authorities].filter(([, o]) => o.catchUp !== undefined && o.catchUp.done !== true).map(([authority, o]) => [o.home, authority])),
    abandonedById: Object.fromEntries([...state.abandoned].map(([released, entry]) => [entry.id, released])),
    abandonedByAuthority: releasesByAuthority([...state.abandoned].map(([released, entry]) => [entry.authority, released])),
  };
}

function kept(state: OwnershipState) {
  return {
    pendingByAuthority: indexForm(state.pendingByAuthority),
    transfersBySource: indexForm(state.transfersBySource),
    transfersByTarget: indexForm(state.transfersByTarget),
    transfersByDriver: indexForm(state.transfersByDriver),
    transfersById: Object.fromEntries(sorted([...state.transfersById].map(([id, authority]) => `${id}=${authority}`)).map((pair) => pair.split('='))),
    unsettledByHome: indexForm(state.unsettledByHome),
    abandonedById: Object.fromEntries(state.abandonedById),
    abandonedByAuthority: releasesByAuthority([...state.abandonedByAuthority].flatMap(([authority, releases]) => releases.map((r): [string, number] => [authority, r]))),
  };
}

test('the ownership indexes always equal a recount from the records, through snapshots and captures', (t) => {
  fc.assert(
    fc.property(fc.array(step, { minLength: 30, maxLength: 120 }), (steps) => {
      const log = new Log();
      // node:assert throws, so fast-check shrinks a failure and prints the seed that replays it.
      for (const s of steps) {
        run(log, s);
        deepStrictEqual(kept(log.state), recount(log.state), `indexes after ${JSON.stringify(s)}`);
        for (const [authority, intent] of log.state.transfers) ok(intent.authority === authority);
        for (const [id, pending] of log.state.pending) ok(pending.record.id === id && pending.awaiting.length > 0);
        for (const [released, entry] of log.state.abandoned) ok(entry.released === released);
        for (const releases of log.state.abandonedByAuthority.values()) {
          ok(releases.length <= ABANDONED_PER_AUTHORITY);
          if (releases.length === ABANDONED_PER_AUTHORITY) reached.abandonedAtBound += 1;
        }
      }
      // A capture is frozen when taken: what it assembles into is the state of that moment.
      for (const { capture, then } of log.captures) {
        const rebuilt = assemble(capture);
        deepStrictEqual(snapshotOwnership(rebuilt), then);
        deepStrictEqual(kept(rebuilt), recount(rebuilt));
        reached.frozenCapturesChecked += 1;
      }
    }),
    { numRuns: 300 },
  );
  t.log(reached);
  t.true(reached.commits > 30, `commits reached: ${reached.commits}`);
  t.true(reached.acksReleasing > 5, `acks releasing a record: ${reached.acksReleasing}`);
  t.true(reached.restoresMidTransfer > 20, `restores with a transfer registered: ${reached.restoresMidTransfer}`);
  t.true(reached.frozenCapturesChecked > 20, `frozen captures checked: ${reached.frozenCapturesChecked}`);
  t.true(reached.settledByEveryMember > 5, `moves settled by every member named: ${reached.settledByEveryMember}`);
  t.true(reached.unsettledRestored > 10, `restores with an unsettled move: ${reached.unsettledRestored}`);
  t.true(reached.abandonedRestored > 20, `restores with an abandoned key: ${reached.abandonedRestored}`);
  t.true(reached.abandonedAtBound > 5, `authorities at the abandoned-key bound: ${reached.abandonedAtBound}`);
});

test('a capture of many authorities travels in bounded pieces and assembles into the same state', (t) => {
  const log = new Log();
  for (let i = 0; i < 3_500; i += 1) log.apply({ type: 'transfer_authority', authority: `a${i}`, target: DATACENTERS[i % 3] });
  log.apply({
    type: 'register_transfer',
    id: 'k1',
    authority: 'a1',
    source: 'west',
    target: 'east',
    actor: 'olivia',
    reason: 'drain',
    driver: 'east-1',
    sources: [{ member: 'west-1', incarnation: 'i1', serial: 3 }],
    deadline: 1_000,
  });
  const before = structuredClone(snapshotOwnership(log.state));
  const capture = machine.capture(log.state);
  // Changes after the capture must not show in it, including a step of the registered transfer.
  log.apply({ type: 'transfer_authority', authority: 'a0', target: 'north' });
  log.apply({ type: 'freeze_transfer', id: 'k1', authority: 'a1', thawBy: 2_000 });
  log.apply({ type: 'transfer_authority', authority: 'later', target: 'east' });
  const pieces = [...capture.pieces()];
  t.true(pieces.length >= 5, `the authorities travel in several pieces (${pieces.length})`);
  for (const piece of pieces) t.true(JSON.stringify(piece).length < 256 * 1024, 'each piece is small');
  const rebuilt = assemble(capture);
  t.deepEqual(snapshotOwnership(rebuilt), before);
  t.false(rebuilt.transfers.get('a1')!.frozen, 'the capture kept the intent as it was');
  t.deepEqual([...rebuilt.transfersBySource.get('west')!], ['a1']);
  t.is(rebuilt.authorities.get('later'), undefined);
  t.throws(() => machine.assemble().add({ kind: 'authorities', records: [] }), { message: /malformed/ });
  t.throws(() => machine.assemble().finish(), { message: /malformed/ });
  const bad = machine.assemble();
  bad.add({ kind: 'head', format: 1 });
  t.throws(() => bad.add({ kind: 'authorities', records: [['x', null]] }), { message: /malformed/ });
});

test("any sequence of ownership commands seals, per authority, a trail whose chain verifies against the head the state keeps, through snapshots and captures", (t) => {
  fc.assert(
    fc.property(fc.array(step, { minLength: 30, maxLength: 120 }), (steps) => {
      const log = new Log();
      for (const s of steps) run(log, s);
      for (const [authority, records] of log.sealed) {
        const verdict = verifyTrail(records, log.state.chains.get(authority));
        deepStrictEqual(verdict, { ok: true, checked: records.length, unchained: 0, behind: false }, `the trail of ${authority}`);
        deepStrictEqual(log.state.chains.get(authority)!.head!.records, records.length);
        chained.records += records.length;
        for (const r of records) chained.kinds.add(r.kind!);
      }
      for (const authority of log.state.chains.keys()) ok(log.sealed.has(authority), `a chain for ${authority} that sealed nothing`);
    }),
    { numRuns: 200 },
  );
  // A trail long enough to be anchored: an edit before the anchor is caught even with the head rewritten.
  const log = new Log();
  for (let i = 0; i < 130; i += 1) log.apply({ type: 'transfer_authority', authority: 'proj', target: DATACENTERS[i % 3] });
  const records = log.sealed.get('proj')!;
  const chain = log.state.chains.get('proj')!;
  t.is(chain.anchors.length, 2, 'an anchor every 64 records');
  const forged = records.map((r, i) => (i === 10 ? { ...r, actor: 'mallory' } : r));
  t.like(verifyTrail(forged, chain), { ok: false, id: records[10]!.id });
  t.log({ records: chained.records, kinds: [...chained.kinds].sort() });
  t.true(chained.records > 300, `records chained: ${chained.records}`);
  t.deepEqual([...chained.kinds].sort(), ['authority_established', 'failover_transfer', 'planned_transfer', 'raw_transfer'], 'every kind was sealed');
});
