import { appendFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { eventually } from '../hosts/eventually.js';
import type { NemesisCluster } from './cluster.js';
import { Nemesis, type FaultWindow, type NemesisOptions } from './nemesis.js';
import { OperationLog } from './operation-log.js';
import { formatSummary, summarize, type RunSummary } from './run-summary.js';

/** What a workload is given: where its run lives, its randomness, the history to record into. */
export interface RunContext {
  seed: number;
  members: number;
  /** This run's directory: members' data, configs and logs; kept when the run fails. */
  dir: string;
  rng: SeededRng;
  log: OperationLog;
}

/**
 * A workload over one variant's real processes: starts the cluster, runs clients while the
 * nemesis breaks things, then checks the history and the healed cluster.
 */
export interface Workload {
  /** Names the run and its directory: "register", "stream", "authority". */
  name: string;
  /** The compiled test file, for the replay command. */
  testFile: string;
  start(ctx: RunContext): Promise<NemesisCluster>;
  /** Client loops: each issues operations until `signal` aborts, then returns once its last one settled. */
  clients(ctx: RunContext, signal: AbortSignal): Array<Promise<void>>;
  /** After every fault is healed and the clients stopped: what went wrong (empty when nothing did). */
  check(ctx: RunContext): Promise<string[]>;
  /** Stops every member process. */
  stop(): Promise<void>;
  /** Operations whose ok answer shows the cluster serving again after a fault on the leader. */
  progressOps?: readonly string[];
  /** Lines of the summary only this workload can tell (how long its own failovers took). */
  summaryLines?(ctx: RunContext, windows: readonly FaultWindow[]): string[];
}

export interface RunOutcome {
  seed: number;
  summary: RunSummary;
  problems: string[];
  /** The summary, the problems and, for a failing run, where its evidence is and how to replay it. */
  report: string;
  /** Where the history, logs and seed of a failing run were kept. */
  keptAt?: string;
  /** Per operation of `mustSucceed`: how many invoked once every fault was healed ended ok. */
  okAfterHeal: Record<string, number>;
}

/** The longest quiet spell after healing in which `mustSucceed` operations must get through. */
const HEALED_QUIET_MAX_MS = 20_000;

/** Where failing runs keep their evidence: `.nemesis/` at the repository root (gitignored). */
const RUNS_ROOT =
  process.env.NEMESIS_DIR ?? fileURLToPath(new URL('../../../.nemesis/', import.meta.url));

/**
 * One seeded run: the cluster starts, clients run the workload and the nemesis applies faults
 * for `seconds`, every fault is healed, the clients run on until each of `mustSucceed` has
 * succeeded again (within a bound: liveness after healing), stop, and the workload checks what
 * was recorded. A run with problems keeps its directory (history, faults, every member's log, the
 * seed) and says how to replay it; a clean run removes it.
 */
export async function runNemesis(
  workload: Workload,
  options: {
    seed: number;
    seconds: number;
    members: number;
    nemesis?: NemesisOptions;
    /** Operations that must succeed again once the faults are healed (liveness after healing). */
    mustSucceed?: readonly string[];
    /**
     * Faults go on past `seconds` until `enough` holds (the faults a test needs have been made;
     * on a slow machine a minute may hold too few), at most `extraSeconds` more.
     */
    faultsUntil?: { enough: () => boolean; extraSeconds: number };
  },
): Promise<RunOutcome> {
  const { seed, seconds, members } = options;
  const dir = join(
    RUNS_ROOT,
    `${workload.name}-seed${seed}-${members}m-${process.pid}-${Date.now()}`,
  );
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const rng = new SeededRng(seed);
  const ctx: RunContext = {
    seed,
    members,
    dir,
    rng: rng.fork('workload'),
    log: new OperationLog(),
  };
  const problems: string[] = [];
  let nemesis: Nemesis | undefined;
  let startedAt: number | undefined;
  let healedAt: number | undefined;
  /** How long the faults went on past `seconds` (faultsUntil). */
  let extendedMs = 0;
  const mustSucceed = options.mustSucceed ?? [];
  try {
    const cluster = await workload.start(ctx);
    startedAt = ctx.log.now();
    nemesis = new Nemesis(cluster, rng.fork('nemesis'), ctx.log, options.nemesis);
    const stopFaults = new AbortController();
    const stopClients = new AbortController();
    const clients = workload.clients(ctx, stopClients.signal);
    const faults = nemesis.run(stopFaults.signal);
    await new SystemClock().sleep(seconds * 1000);
    const until = options.faultsUntil;
    if (until) {
      const budgetEnd = ctx.log.now();
      await eventually(until.enough, 'the faults a test needs', until.extraSeconds * 1000).catch(
        () => undefined,
      );
      extendedMs = ctx.log.now() - budgetEnd;
    }
    stopFaults.abort();
    await faults;
    healedAt = ctx.log.now();
    // Healed time with clients still running: at least a second, and until each operation that
    // must succeed has succeeded once since the heal (liveness: within a bound, or a problem).
    await new SystemClock().sleep(1000);
    await eventually(
      () => mustSucceed.every((f) => okSince(ctx.log, f, healedAt!) > 0),
      `${mustSucceed.join(', ')} to succeed after healing`,
      HEALED_QUIET_MAX_MS,
    ).catch(() => {
      const stuck = mustSucceed.filter((f) => okSince(ctx.log, f, healedAt!) === 0);
      problems.push(
        `liveness: no ${stuck.join(', no ')} invoked after every fault was healed succeeded within ${HEALED_QUIET_MAX_MS / 1000} s`,
      );
    });
    stopClients.abort();
    await Promise.all(clients);
    ctx.log.settleStragglers();
    problems.push(...(await workload.check(ctx)));
  } catch (error) {
    problems.push(`the run itself failed: ${(error as Error).stack ?? String(error)}`);
  } finally {
    await nemesis
      ?.healAll()
      .catch((error: Error) => problems.push(`healing failed: ${error.message}`));
    await workload
      .stop()
      .catch((error: Error) => problems.push(`stopping the members failed: ${error.message}`));
  }
  ctx.log.settleStragglers();
  const okAfterHeal = Object.fromEntries(
    mustSucceed.map((f) => [f, healedAt === undefined ? 0 : okSince(ctx.log, f, healedAt)]),
  );
  const windows = nemesis?.windows ?? [];
  const summary = summarize(ctx.log.records, windows, workload.progressOps);
  const title = `${workload.name}, seed ${seed}, ${members} members, ${seconds} s`;
  const lines = [formatSummary(title, summary, nemesis?.skipped ?? [])];
  lines.push(...(workload.summaryLines?.(ctx, windows) ?? []));
  if (extendedMs >= 1000)
    lines.push(
      `  faults went on ${(extendedMs / 1000).toFixed(1)} s past the ${seconds} s, until the test had the faults it needs`,
    );
  if (healedAt !== undefined && mustSucceed.length > 0)
    lines.push(
      `  healed at ${(healedAt / 1000).toFixed(1)} s; ok since: ${mustSucceed.map((f) => `${f} ${okAfterHeal[f]}`).join(', ')}`,
    );
  if (startedAt !== undefined)
    lines.push(
      `  cluster started in ${(startedAt / 1000).toFixed(1)} s; faults (s since the run began):`,
    );
  for (const w of windows)
    lines.push(`    ${(w.start / 1000).toFixed(1).padStart(6)} s  ${w.kind}: ${w.describe}`);
  if (process.env.NEMESIS_RESULTS)
    await appendFile(
      process.env.NEMESIS_RESULTS,
      `${JSON.stringify({ workload: workload.name, seed, members, seconds, problems: problems.length, ...summary, extra: workload.summaryLines?.(ctx, windows) ?? [] })}\n`,
    );
  const replay = `NEMESIS_SEED=${seed} NEMESIS_SECONDS=${seconds} NEMESIS_MEMBERS=${members} npx ava ${workload.testFile}`;
  if (problems.length === 0 && !process.env.NEMESIS_KEEP) {
    await rm(dir, { recursive: true, force: true });
    return { seed, summary, problems, report: lines.join('\n'), okAfterHeal };
  }
  if (problems.length > 0) {
    lines.push(`PROBLEMS (${problems.length}):`, ...problems.slice(0, 20).map((p) => `  - ${p}`));
    if (problems.length > 20)
      lines.push(`  ... and ${problems.length - 20} more (see problems.json)`);
  }
  await writeFile(join(dir, 'history.json'), JSON.stringify(ctx.log.records, null, 1));
  await writeFile(join(dir, 'faults.json'), JSON.stringify(windows, null, 1));
  await writeFile(join(dir, 'problems.json'), JSON.stringify(problems, null, 1));
  await writeFile(join(dir, 'seed.txt'), `${seed}\nreplay: ${replay}\n`);
  lines.push(
    `kept the history, faults, every member's log (*/member.log) and the seed in ${dir}`,
    `replay: ${replay}`,
  );
  const report = lines.join('\n');
  await writeFile(join(dir, 'summary.txt'), `${report}\n`);
  return { seed, summary, problems, report, keptAt: dir, okAfterHeal };
}

/** Operations `f` invoked at or after `since` (ms of the run) that ended ok. */
function okSince(log: OperationLog, f: string, since: number): number {
  let n = 0;
  for (let i = log.records.length - 1; i >= 0 && log.records[i].invokedAt >= since; i--) {
    const r = log.records[i];
    if (r.f === f && r.outcome === 'ok') n += 1;
  }
  return n;
}
