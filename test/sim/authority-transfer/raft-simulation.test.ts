import test from 'ava';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import type { OwnershipCommand } from '@baton/authority-transfer/internal/ownership.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { Observer } from './authority-invariants.js';
import { RaftAuthorityCluster } from './raft-cluster.js';
import { runSeeds } from './run-seeds.js';
import { scheduleOf } from './sim-schedules.js';
import { DATACENTERS, type SimMember } from './sim-cluster.js';

// The planned-transfer simulation over Raft: three datacenters whose ownership consensus is
// one Raft group on the simulated network. The Observer (authority-invariants.ts) is the one
// the fake-log simulation uses. SIM_SEEDS=N runs seeds 1..N; SIM_SEED=S replays one.

const AUTHORITIES = ['proj', 'lib', 'app', 'tool'];
const STEPS = 150;
const BUDGET_MS = 60_000;

async function runSeed(
  seed: number,
): Promise<{ commits: number; abandoned: number; faults: number; crossMemberCancels: number; cancelsElsewhere: number; checkedCommits: number; acknowledged: number; cancelsOfRegistered: number; cancelThenCommit: number; commitsAfterDiskLoss: number; checkedSettles: number; checkedHomeWrites: number }> {
  const rng = new SeededRng(seed);
  const cluster = new RaftAuthorityCluster(seed, rng.fork('cluster'), BUDGET_MS);
  const { clock, raft } = cluster;
  const observer = new Observer(cluster);
  await cluster.open();
  const members = [...cluster.members.values()];
  const runs = new Map<string, { member: SimMember; authority: string; done: boolean; crashed: boolean }>();
  const requests = new Map<string, { authority: string; source: string; target: string }>();
  let keySeq = 0;
  const cancelledKeys = new Set<string>();
  let faults = 0;
  let cancelsElsewhere = 0;
  let acknowledged = 0;

  /** Moves virtual time until `p` settles; a promise still pending after `limitMs` is left behind. */
  const settle = async (p: Promise<unknown>, limitMs = 20_000) => {
    let done = false;
    p.then(
      () => (done = true),
      () => (done = true),
    );
    await raft.until(() => done, limitMs, 'an operation to settle').catch(() => undefined);
  };
  /** An operator's command that must land: retried under one key until a leader commits it. */
  const must = async (command: OwnershipCommand) => {
    const idempotencyKey = `setup-${keySeq++}`;
    for (let attempt = 0; attempt < 20; attempt++) {
      const leader = await raft.waitForLeader(30_000);
      let ok = false;
      await settle(leader.propose(command, { idempotencyKey }).then(() => (ok = true)));
      if (ok) return;
    }
    throw new Error(`${command.type} never committed`);
  };

  for (const authority of AUTHORITIES)
    await must({ type: 'transfer_authority', authority, target: rng.pick(DATACENTERS) });

  // Some requests are scheduled (a start ahead, an end by which to give up), from their own stream.
  const schedules = rng.fork('schedules');
  const start = (
    member: SimMember,
    id: string,
    authority: string,
    source: string,
    target: string,
  ) => {
    requests.set(id, { authority, source, target });
    const entry = { member, authority, done: false, crashed: false };
    const started = observer.runStarted(authority);
    runs.set(id, entry);
    member.engine.start({ id, authority, source, target, actor: 'sim', reason: `sim ${id}`, ...scheduleOf(schedules, clock.now()) }).then(
      () => void (entry.done = true),
      (error) => {
        entry.done = true;
        // A run its member's crash ended answers no client: the key is the operator's to reissue.
        if (!entry.crashed) observer.runEnded(id, error, member.id, started);
      },
    );
  };

  // A target member loses its disk after the probe that readied the plan, before the commit
  // applies: the new home must refuse writes until it caught up again (authority-invariants.ts).
  const diskLoss = rng.fork('disk-loss-after-probe');
  cluster.beforePropose = async (command, proposer) => {
    if (command.type !== 'commit_planned_transfer' || !diskLoss.chance(0.3)) return;
    const target = members.find((m) => m.datacenter === command.target && m.id !== proposer);
    if (!target) return;
    faults++;
    for (const run of runs.values()) if (run.member === target && !run.done) run.crashed = true;
    observer.diskLostBeforeCommit(command.id, target.id);
    // Any other transfer to that datacenter past its last probe (frozen, every final in) loses it
    // too: the target's one apply can answer several waiting probes, so their commits go together.
    // As any member's view shows them: the target's own may not have applied their finals yet.
    observer.targetLosesDisk(target);
    await cluster.crashAndRestart(target, { loseDisk: true });
  };

  for (let step = 0; step < STEPS; step++) {
    const roll = rng.int(100);
    const member = rng.pick(members);
    const state = cluster.state();
    if (roll < 25) {
      // A write at the authority's home under the epoch its own view holds.
      const authority = rng.pick(AUTHORITIES);
      const own = state.authorities.get(authority)!;
      const home = members.find((m) => m.datacenter === own.home)!;
      try {
        await settle(
          home.fence.finalise(home.fence.admit(authority, own.epoch), `op${step}`).then((entry) => {
            acknowledged++;
            observer.acknowledgedWrite(home, entry);
          }),
        );
      } catch {
        // Its view lags the freshest one: the write is refused, as it should be.
      }
    } else if (roll < 40) {
      const authority = rng.pick(AUTHORITIES);
      const own = state.authorities.get(authority)!;
      const target = rng.pick(DATACENTERS.filter((dc) => dc !== own.home));
      start(member, `k${keySeq++}`, authority, own.home, target);
    } else if (roll < 45) {
      // A duplicate of a running request on its member, or a retry elsewhere once it ended.
      const candidates = [...runs.entries()].filter(([id]) => !observer.abandoned.has(id) && !cancelledKeys.has(id));
      if (candidates.length > 0) {
        const [id, run] = rng.pick(candidates);
        const { authority, source, target } = requests.get(id)!;
        start(run.done ? member : run.member, id, authority, source, target);
      }
    } else if (roll < 53) {
      const live = [...runs.values()].filter((r) => !r.done);
      if (live.length > 0) {
        const run = rng.pick(live);
        const at = rng.chance(0.5) ? run.member : member;
        if (at !== run.member) cancelsElsewhere++;
        observer.cancelSent(run.authority);
        const registered = cluster.state().transfers.get(run.authority)?.id;
        const liveThere = [...runs.entries()].filter(([, r]) => !r.done && r.authority === run.authority).map(([id]) => id);
        await settle(
          at.engine.cancel(run.authority).then(() => {
            observer.cancelAnswered(at.id, registered);
            // The operator reissues no key a cancel called off (a reissue would be a new request).
            for (const id of liveThere) cancelledKeys.add(id);
            if (registered !== undefined) cancelledKeys.add(registered);
          }),
        );
      }
    } else if (roll < 62) {
      // Feed replication between datacenters that can reach each other.
      for (const to of members) {
        for (const from of members) {
          if (to === from || cluster.partitioned(to.datacenter, from.datacenter)) continue;
          await to.pull(from, rng.int(3));
        }
      }
    } else if (roll < 67) {
      faults++;
      cluster.cut(rng.pick(DATACENTERS), rng.pick(DATACENTERS));
    } else if (roll < 73) {
      cluster.healAll();
    } else if (roll < 77) {
      faults++;
      cluster.loseLeader();
    } else if (roll < 83) {
      member.audit.failWith(
        rng.chance(0.5) ? new StoreUnavailableError('audit', 'sim outage') : undefined,
      );
    } else if (roll < 86) {
      faults++;
      for (const run of runs.values()) if (run.member === member && !run.done) run.crashed = true;
      const loseDisk = rng.chance(0.25);
      if (loseDisk) observer.targetLosesDisk(member);
      await cluster.crashAndRestart(member, { loseDisk });
    }
    await clock.advanceAsync(rng.int(3_000));
    await observer.checkStep();
  }

  // Heal: no partitions, stores up, a leader, replication caught up; let every run resolve.
  cluster.healAll();
  for (const m of members) m.audit.failWith(undefined);
  await raft.waitForLeader(30_000);
  for (let round = 0; round < 5; round++) {
    for (const to of members) for (const from of members) if (to !== from) await to.pull(from);
    await clock.advanceAsync(BUDGET_MS);
  }
  await raft.until(() => raft.converged(), 30_000, 'the members to converge');
  await observer.checkFinal();
  for (const m of members) m.halt();
  await raft.stopAll();
  return {
    commits: observer.committed.size,
    abandoned: observer.abandoned.size,
    faults,
    crossMemberCancels: observer.crossMemberCancels,
    cancelsElsewhere,
    checkedCommits: observer.checkedCommits,
    acknowledged,
    cancelsOfRegistered: observer.cancelsOfRegistered,
    cancelThenCommit: observer.cancelThenCommit,
    commitsAfterDiskLoss: observer.commitsAfterDiskLoss,
    checkedSettles: observer.checkedSettles,
    checkedHomeWrites: observer.checkedHomeWrites,
  };
}

test('planned transfers over Raft keep their invariants under partitions, leader loss, store failures and crashes', async (t) => {
  // Seed 303: a retry joined a registration past its deadline, whose expiry elsewhere then
  // answered "cancelled" with no cancel sent (now a 504).
  // Seed 335: a retry joined its key's registration as its view showed it, released meanwhile, so
  // it registered anew with no barrier and committed short of a write (now refused, re-read).
  const ran = await runSeeds(t, 'raft-simulation.test.js', runSeed, [303, 335]);
  if (!ran) return;
  const { commits, abandoned, faults, crossMemberCancels, cancelsElsewhere, checkedCommits, acknowledged, cancelsOfRegistered, cancelThenCommit, commitsAfterDiskLoss, checkedSettles, checkedHomeWrites } = ran.totals;
  t.log(
    `${ran.seeds} seeds: ${commits} commits (${checkedCommits} checked against the ${acknowledged} acknowledged writes), ${abandoned} cancelled or timed out, ${faults} network faults and crashes, ${cancelsElsewhere} cancels at a member not running the transfer, ${crossMemberCancels} runs of a key in doubt elsewhere cancelled (none moved), ${cancelsOfRegistered} cancels answered 204 for a registered transfer, ${cancelThenCommit} of them later committed, ${commitsAfterDiskLoss} commits to a target that lost its disk after the last probe, ${checkedHomeWrites} writes at a new home before it settled and ${checkedSettles} settles checked against the old epoch's writes`,
  );
  t.true(commitsAfterDiskLoss > 0, 'targets lost their disk between the last probe and the commit');
  t.true(checkedSettles > 0, 'new homes settled the catch-up of planned moves');
  t.is(cancelThenCommit, 0, 'no cancel answered 204 for a transfer that later committed');
  t.true(checkedCommits >= commits, 'every commit was checked');
  t.true(commits > 0, 'the runs committed transfers');
  t.true(abandoned > 0, 'the runs cancelled or timed out transfers');
  t.true(faults > 0, 'the runs injected faults');
});
