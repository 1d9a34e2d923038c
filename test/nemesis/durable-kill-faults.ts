import { readFile } from 'node:fs/promises';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { eventually } from '../hosts/eventually.js';
import { killInside, type DurableWindow } from './aimed-kill.js';
import type { ClusterMember, NemesisCluster, WorkloadFault } from './cluster.js';

/** How long one fault looks for its window before it kills anyway (a miss, counted). */
const AIM_MS = 8_000;
/**
 * How long a restarted member is watched for an install: it must load and start first, which
 * takes 10 s and more on a loaded machine (with 8 s, installs came just after the watch ended).
 */
const INSTALL_AIM_MS = 25_000;
/** How long a member killed for a snapshot install may take to be left behind by the others. */
const LEFT_BEHIND_MS = 20_000;
/** A restarted member must serve within this, or it failed to restart. */
const RESTART_MS = 60_000;

/** Per kind of aimed kill: kills that landed inside the window, and those that missed it. */
export type AimedKillTally = Record<string, { landed: number; missed: number; late: number }>;

/** What the aimed kills of a run found: every landed and missed kill, and members that did not come back. */
export interface AimedKills {
  tally: AimedKillTally;
  /** A member that did not serve again after a kill (a refused start is one: a kill is no corruption). */
  problems: string[];
}

/** A kind of kill aimed at a window every member has (a compaction, a store put). */
export interface WindowKind {
  kind: string;
  windowOf(member: ClusterMember): DurableWindow;
}

/** The kill aimed at a Raft snapshot install: a member is first left behind, then killed while it installs. */
export interface InstallKind {
  kind: string;
  /** The install window in `member`, for snapshots above `above`. */
  windowOf(member: ClusterMember, above: number): DurableWindow;
  /** The member's applied index of the metadata log (its metrics), if it answers. */
  appliedIndex(id: string): Promise<number | undefined>;
  /** How many entries the others must move on while it is down (beyond what the leader retains). */
  behindBy: number;
  /** Own snapshots of a restarted member stay this close to what it had applied (the snapshot interval). */
  ownSnapshotSlack: number;
  /** Makes the others commit an entry or two (a run's own traffic may be too sparse to leave a member behind soon). */
  nudge?(survivor: string): Promise<void>;
}

/**
 * The workload faults of the durable-path nemesis: each kind kills a member with SIGKILL while
 * it is inside one durable window (see aimed-kill.ts), then restarts it on the same data and
 * waits for it to serve. A kind that finds no member inside its window within a few seconds
 * kills its target anyway, counted as missed, so the loop keeps killing. Records every outcome
 * in `kills`; a member that does not serve again after a kill is a problem.
 */
export function durableKillFaults(
  cluster: NemesisCluster,
  kinds: readonly WindowKind[],
  install: InstallKind | undefined,
  kills: AimedKills,
): WorkloadFault[] {
  const clock = new SystemClock();
  const member = (id: string) => cluster.members.find((m) => m.id === id)!;
  const count = (kind: string) => (kills.tally[kind] ??= { landed: 0, missed: 0, late: 0 });

  /** Starts a killed member and waits until it serves; a problem when it exits or never serves. */
  const restart = async (killed: ClusterMember, after: string): Promise<string> => {
    const started = clock.now();
    if (!killed.process.running) killed.process.start();
    const exited = killed.process.exited;
    const giveUp = new AbortController();
    let outcome: 'serving' | 'exited' | 'silent';
    try {
      outcome = await Promise.race([
        cluster.waitReady(killed.id).then(() => 'serving' as const),
        exited!.then(() => 'exited' as const),
        clock.sleep(RESTART_MS, giveUp.signal).then(() => 'silent' as const),
      ]);
    } catch {
      outcome = 'silent';
    } finally {
      giveUp.abort();
    }
    if (outcome === 'serving')
      return `serving ${Math.round(clock.now() - started)} ms after the restart`;
    const tail = await lastStartLog(killed.process.logFile);
    kills.problems.push(
      `${killed.id} did not start again after a kill ${after}: ${outcome === 'exited' ? 'it exited' : `it did not serve within ${RESTART_MS / 1000} s`}; its log since that start:\n${tail}`,
    );
    // The rest of the run needs it: a refused start is reported, not left to fail every check.
    if (!killed.process.running) killed.process.start();
    return `did not serve again (${outcome})`;
  };

  const aimedAt = (kind: WindowKind): WorkloadFault => ({
    kind: kind.kind,
    async apply(target, _holdMs, signal) {
      const candidates = cluster.members
        .filter((m) => m.process.running)
        .map((m) => ({ member: m, window: kind.windowOf(m) }));
      const label = candidates[0]?.window.label ?? kind.kind;
      const outcome = await killInside(candidates, AIM_MS, signal);
      count(kind.kind).late += outcome.late;
      // The run ended while aiming: no kill, and no miss to count.
      if (!outcome.killed && signal.aborted)
        return `no member inside ${label} before the run ended`;
      let killed = outcome.killed ? member(outcome.killed) : undefined;
      if (killed) count(kind.kind).landed += 1;
      else {
        count(kind.kind).missed += 1;
        killed = member(target);
        await killed.process.kill();
      }
      const where = outcome.killed
        ? `inside ${label}`
        : `(no member inside ${label} in ${AIM_MS / 1000} s)`;
      return `kill -9 ${killed.id} ${where}; ${await restart(killed, where)}`;
    },
  });

  /**
   * One try: kill the member, let the others move on past what the leader retains, start it
   * with its raft directory watched, and kill it again while it installs the leader's snapshot.
   */
  const installOnce = async (kind: InstallKind, victim: ClusterMember, signal: AbortSignal) => {
    const applied = await kind.appliedIndex(victim.id);
    if (applied === undefined)
      return { landed: false, describe: `${victim.id} gave no applied index: no kill` };
    await victim.process.kill();
    const others = cluster.members.filter((m) => m.id !== victim.id).map((m) => m.id);
    let nudges = 0;
    const ahead = async () => {
      if (kind.nudge && nudges < kind.behindBy) {
        nudges += 1;
        await kind.nudge(others[nudges % others.length]).catch(() => undefined);
      }
      const indexes = await Promise.all(others.map((id) => kind.appliedIndex(id)));
      return indexes.some((i) => i !== undefined && i >= applied + kind.behindBy);
    };
    const leftBehind = await eventually(ahead, 'the others to move on', LEFT_BEHIND_MS).then(
      () => true,
      () => false,
    );
    const window = kind.windowOf(victim, applied + kind.ownSnapshotSlack);
    const outcome = signal.aborted
      ? { late: 0 }
      : await killInside([{ member: victim, window }], INSTALL_AIM_MS, signal, () =>
          victim.process.start(),
        );
    count(kind.kind).late += outcome.late;
    const first = `kill -9 ${victim.id} at applied index ${applied}${leftBehind ? `, left ${kind.behindBy} entries behind` : ', the others did not move on'}`;
    if (!outcome.killed && signal.aborted)
      return { landed: false, describe: `${first}; restarted, the run ended before an install` };
    if (!outcome.killed)
      return {
        landed: false,
        describe: `${first}; restarted, no install seen in ${INSTALL_AIM_MS / 1000} s; ${await restart(victim, 'before an install')}`,
      };
    return {
      landed: true,
      describe: `${first}; restarted and killed -9 again inside ${window.label}; ${await restart(victim, `inside ${window.label}`)}`,
    };
  };

  const aimedAtInstall = (kind: InstallKind): WorkloadFault => ({
    kind: kind.kind,
    async apply(target, _holdMs, signal) {
      const tries: string[] = [];
      // A member may catch up from entries the leader still had: one more try before a miss.
      for (let attempt = 0; attempt < 2 && !signal.aborted; attempt++) {
        const { landed, describe } = await installOnce(kind, member(target), signal);
        tries.push(describe);
        if (landed) {
          count(kind.kind).landed += 1;
          return tries.join('; then ');
        }
      }
      if (!signal.aborted) count(kind.kind).missed += 1;
      return tries.join('; then ');
    },
  });

  return [...kinds.map(aimedAt), ...(install ? [aimedAtInstall(install)] : [])];
}

/** What a member logged since its last start (the nemesis marks each start in its log). */
async function lastStartLog(logFile: string): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  const start = text.lastIndexOf('--- nemesis: start');
  return text
    .slice(start < 0 ? 0 : start)
    .split('\n')
    .slice(0, 40)
    .join('\n');
}

/** The summary lines of the aimed kills: per kind, how many landed inside the window and how many missed. */
export function aimedKillLines(kills: AimedKills): string[] {
  return Object.entries(kills.tally).map(
    ([kind, t]) =>
      `  aimed kills, ${kind}: ${t.landed} inside the window, ${t.missed} missed it (${t.late} stops found the member already past it)`,
  );
}
