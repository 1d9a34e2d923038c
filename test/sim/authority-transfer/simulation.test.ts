import test from 'ava';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { OutcomeUnknownError } from '@baton/contracts/internal/metadata-consensus.js';
import { HomeCatchingUpError } from '@baton/authority-transfer/internal/transfer-errors.js';
import type { AdmittedWrite } from '@baton/authority-transfer/internal/write-fence.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { Observer } from './authority-invariants.js';
import { runSeeds } from './run-seeds.js';
import { scheduleOf } from './sim-schedules.js';
import { DATACENTERS, MEMBERS, SimCluster, type SimMember } from './sim-cluster.js';

const AUTHORITIES = ['proj', 'lib', 'app', 'tool'];
const STEPS = 250;
const BUDGET_MS = 60_000;

async function runSeed(seed: number): Promise<{ commits: number; abandoned: number; checkedCommits: number; cancelsElsewhere: number; crossMemberCancels: number; refusedWhileFrozen: number; cancelsOfRegistered: number; cancelThenCommit: number; commitsAfterDiskLoss: number; checkedSettles: number; refusedCatchingUp: number; checkedHomeWrites: number }> {
  const rng = new SeededRng(seed);
  const clock = new VirtualClock();
  const cluster = new SimCluster(clock, rng.fork('cluster'), BUDGET_MS);
  await cluster.open();
  const observer = new Observer(cluster);
  const members = [...cluster.members.values()];
  const runs = new Map<string, { member: SimMember; authority: string; done: boolean; crashed: boolean }>();
  const inFlightWrites: { member: SimMember; write: AdmittedWrite }[] = [];
  let keySeq = 0;
  const cancelledKeys = new Set<string>();
  let cancelsElsewhere = 0;
  let refusedWhileFrozen = 0;
  let refusedCatchingUp = 0;

  for (const authority of AUTHORITIES) {
    await cluster.log.propose({
      type: 'transfer_authority',
      authority,
      target: rng.pick(DATACENTERS),
    });
  }

  // A target member loses its disk after the probe that readied the plan, before the commit
  // applies: no probe can see it, so the new home must refuse writes until it caught up again.
  const faults = rng.fork('disk-loss-after-probe');
  cluster.beforePropose = async (command, proposer) => {
    if (command.type !== 'commit_planned_transfer' || !faults.chance(0.3)) return;
    const target = members.find((m) => m.datacenter === command.target && m.id !== proposer);
    if (!target) return;
    for (const run of runs.values()) if (run.member === target && !run.done) run.crashed = true;
    observer.diskLostBeforeCommit(command.id, target.id);
    // Any other transfer to that datacenter past its last probe (frozen, every final in) loses it
    // too: the target's one apply can answer several waiting probes, so their commits go together.
    // As any member's view shows them: the target's own may not have applied their finals yet.
    observer.targetLosesDisk(target);
    await target.crashAndRestart({ loseDisk: true });
  };

  const track = (id: string, member: SimMember, authority: string, run: Promise<unknown>) => {
    const entry = { member, authority, done: false, crashed: false };
    const started = observer.runStarted(authority);
    runs.set(id, entry);
    run.then(
      () => void (entry.done = true),
      (error) => {
        entry.done = true;
        // A run its member's crash ended answers no client: the key is the operator's to reissue.
        if (!entry.crashed) observer.runEnded(id, error, member.id, started);
      },
    );
  };

  const requests = new Map<string, { authority: string; source: string; target: string }>();
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
    const reason = `sim ${id}`;
    track(
      id,
      member,
      authority,
      member.engine.start({ id, authority, source, target, actor: 'sim', reason, ...scheduleOf(schedules, clock.now()) }),
    );
  };

  for (let step = 0; step < STEPS; step++) {
    const roll = rng.int(100);
    const member = rng.pick(members);
    const state = cluster.log.view().state;
    if (roll < 25) {
      // A write at the authority's home, under its current epoch (sometimes left in flight).
      const authority = rng.pick(AUTHORITIES);
      const own = state.authorities.get(authority)!;
      const home = members.find((m) => m.datacenter === own.home)!;
      let write: AdmittedWrite;
      try {
        write = home.fence.admit(authority, own.epoch);
      } catch (error) {
        if (error instanceof HomeCatchingUpError) refusedCatchingUp++;
        else refusedWhileFrozen++;
        await clock.advanceAsync(rng.int(3_000));
        await observer.checkStep();
        continue;
      }
      if (rng.chance(0.3)) inFlightWrites.push({ member: home, write });
      else {
        await home.fence.finalise(write, `op${step}`).then(
          (entry) => observer.acknowledgedWrite(home, entry),
          () => undefined,
        );
      }
    } else if (roll < 32 && inFlightWrites.length > 0) {
      // Finalise a write admitted earlier: it must be refused if the epoch moved meanwhile.
      const { member: home, write } = inFlightWrites.splice(rng.int(inFlightWrites.length), 1)[0];
      const before = home.feed.serial();
      try {
        observer.acknowledgedWrite(home, await home.fence.finalise(write, `late${step}`));
        const now = cluster.log.view().state.authorities.get(write.authority)!;
        if (now.epoch !== write.epoch || now.home !== home.datacenter)
          observer.fail(`stale write to ${write.authority} finalised`);
      } catch {
        if (home.feed.serial() !== before) observer.fail('a refused write reached the feed');
      }
    } else if (roll < 45) {
      // Start a planned transfer from a random member.
      const authority = rng.pick(AUTHORITIES);
      const own = state.authorities.get(authority)!;
      const target = rng.pick(DATACENTERS.filter((dc) => dc !== own.home));
      start(member, `k${keySeq++}`, authority, own.home, target);
    } else if (roll < 50) {
      // A duplicate of a running request on the same member, or a retry elsewhere after the first run ended.
      const candidates = [...runs.entries()].filter(([id]) => !observer.abandoned.has(id) && !cancelledKeys.has(id));
      if (candidates.length > 0) {
        const [id, run] = rng.pick(candidates);
        const { authority, source, target } = requests.get(id)!;
        const where = run.done ? member : run.member;
        start(where, id, authority, source, target);
      }
    } else if (roll < 58) {
      // Cancel, on the member running it or on any other.
      const live = [...runs.values()].filter((r) => !r.done);
      if (live.length > 0) {
        const run = rng.pick(live);
        const at = rng.chance(0.5) ? run.member : member;
        if (at !== run.member) cancelsElsewhere++;
        observer.cancelSent(run.authority);
        const registered = cluster.log.view().state.transfers.get(run.authority)?.id;
        const liveThere = [...runs.entries()].filter(([, r]) => !r.done && r.authority === run.authority).map(([id]) => id);
        await at.engine.cancel(run.authority).then(
          () => {
            observer.cancelAnswered(at.id, registered);
            // The operator reissues no key a cancel called off (a reissue would be a new request).
            for (const id of liveThere) cancelledKeys.add(id);
            if (registered !== undefined) cancelledKeys.add(registered);
          },
          () => undefined,
        );
      }
    } else if (roll < 64) {
      // Feed replication between datacenters that can reach each other.
      for (const to of members) {
        for (const from of members) {
          if (to === from || cluster.partitioned(to.datacenter, from.datacenter)) continue;
          await to.pull(from, rng.int(3));
        }
      }
    } else if (roll < 68) {
      const [a, b] = [rng.pick(DATACENTERS), rng.pick(DATACENTERS)];
      if (a !== b) cluster.partitions.add(`${a}|${b}`);
    } else if (roll < 73) {
      cluster.partitions.clear();
    } else if (roll < 77) {
      // Leader loss mid-commit: the next proposal may or may not have been appended.
      cluster.log.failNext(new OutcomeUnknownError('leadership_lost', 'sim'), {
        afterApply: rng.chance(0.5),
      });
      cluster.elect(rng.chance(0.2) ? undefined : rng.pick(MEMBERS));
    } else if (roll < 80) {
      cluster.elect(rng.pick(MEMBERS));
    } else if (roll < 85) {
      member.audit.failWith(
        rng.chance(0.5) ? new StoreUnavailableError('audit', 'sim outage') : undefined,
      );
    } else if (roll < 88) {
      // A crash; now and then the disk is lost too, and the feed restarts under a new incarnation.
      for (const run of runs.values()) if (run.member === member && !run.done) run.crashed = true;
      const loseDisk = rng.chance(0.25);
      if (loseDisk) observer.targetLosesDisk(member);
      await member.crashAndRestart({ loseDisk });
    } else if (roll < 89) {
      cluster.restartLog();
    } else if (roll < 90 && !observer.removedVoters.has('north-1') && step > STEPS / 2) {
      observer.removedVoters.add('north-1');
      await cluster.log.removeVoter('north-1');
    }
    await clock.advanceAsync(rng.int(3_000));
    await observer.checkStep();
  }

  // Heal: no partitions, stores up, a leader, replication caught up; let every run resolve.
  cluster.partitions.clear();
  for (const m of members) m.audit.failWith(undefined);
  cluster.elect('west-1');
  for (let round = 0; round < 5; round++) {
    for (const to of members) for (const from of members) if (to !== from) await to.pull(from);
    await clock.advanceAsync(BUDGET_MS);
  }
  await clock.advanceAsync(10_000);
  await observer.checkFinal();
  return {
    commits: observer.committed.size,
    abandoned: observer.abandoned.size,
    checkedCommits: observer.checkedCommits,
    cancelsElsewhere,
    crossMemberCancels: observer.crossMemberCancels,
    refusedWhileFrozen,
    cancelsOfRegistered: observer.cancelsOfRegistered,
    cancelThenCommit: observer.cancelThenCommit,
    commitsAfterDiskLoss: observer.commitsAfterDiskLoss,
    checkedSettles: observer.checkedSettles,
    refusedCatchingUp,
    checkedHomeWrites: observer.checkedHomeWrites,
  };
}

test('planned transfers keep their invariants under partitions, leader loss, store failures and restarts', async (t) => {
  const ran = await runSeeds(t, 'simulation.test.js', runSeed);
  if (!ran) return;
  const { commits, abandoned, checkedCommits, cancelsElsewhere, crossMemberCancels, refusedWhileFrozen, cancelsOfRegistered, cancelThenCommit, commitsAfterDiskLoss, checkedSettles, refusedCatchingUp, checkedHomeWrites } = ran.totals;
  t.log(
    `${ran.seeds} seeds: ${commits} commits (${checkedCommits} checked against every write acknowledged under the old epoch), ${abandoned} cancelled or timed out, ${cancelsElsewhere} cancels at a member not running the transfer, ${crossMemberCancels} runs of a key in doubt elsewhere cancelled (none moved), ${cancelsOfRegistered} cancels answered 204 for a registered transfer, ${cancelThenCommit} of them later committed, ${refusedWhileFrozen} writes refused (frozen or not home), ${commitsAfterDiskLoss} commits to a target that lost its disk after the last probe, ${refusedCatchingUp} writes a new home refused while catching up, ${checkedHomeWrites} writes at a new home before it settled and ${checkedSettles} settles checked against the old epoch's writes`,
  );
  t.true(commitsAfterDiskLoss > 0, 'targets lost their disk between the last probe and the commit');
  t.true(checkedSettles > 0, 'new homes settled the catch-up of planned moves');
  t.is(cancelThenCommit, 0, 'no cancel answered 204 for a transfer that later committed');
  t.true(checkedCommits >= commits, 'every commit was checked');
  t.true(commits > 0, 'the runs committed transfers');
  t.true(abandoned > 0, 'the runs cancelled or timed out transfers');
});
