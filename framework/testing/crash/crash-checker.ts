import { constants, linkSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { access, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DurableFiles, nodeFileSystem, type FileSystem } from '@baton/kernel';
import { SeededRng } from '@baton/conformance';
import { CrashHistory, type HistoryEntry } from './crash-history.js';
import { CrashModel, type CrashChoice, type CrashImage, type CrashState } from './crash-states.js';
import type { CrashFailure, CrashReport } from './crash-report.js';
import { describeOperation } from './recorded-operation.js';
import { RecordingFileSystem, type RecordingOptions } from './recording-file-system.js';

export interface WorkloadContext<Op> {
  /** The store's directory (empty at the start). */
  dir: string;
  /** Write the store through these: they are recorded. */
  files: DurableFiles;
  rng: SeededRng;
  history: CrashHistory<Op>;
}

export interface VerifyContext<Op> {
  /** A directory holding what the power cut left: open the store on it. */
  dir: string;
  /** Real files, without fsyncs (nothing crashes during the check). */
  files: DurableFiles;
  /** What the workload had started before the crash point, acknowledged or still in flight. */
  history: HistoryEntry<Op>[];
}

export interface CrashWorkload<Op> {
  /** Drives the real store with a seeded workload, noting each operation in `history`. */
  run(context: WorkloadContext<Op>): Promise<void>;
  /**
   * Reopens the store on a crash state and throws, saying what is wrong, if recovery fails or
   * an acknowledged operation's effect is missing or changed (or an effect appears that no
   * started operation could have made).
   */
  verify(context: VerifyContext<Op>): Promise<void>;
}

export interface CrashCheckOptions {
  /** Names the store in the report. */
  store: string;
  seed: number;
  /** Distinct crash states to explore (fewer if the log has fewer). */
  states: number;
  /** Only this crash point (replaying a failure). */
  point?: number;
  /** Stop after this many failures (1 by default). */
  maxFailures?: number;
  recording?: RecordingOptions;
}

/** States sampled at each crash point beyond the two fixed ones, at most (the log may be short). */
const MAX_ROUNDS = 512;
/** Crash states checked at once. */
const LANES = 4;

/**
 * The crash-consistency check of one store, in the spirit of ALICE (OSDI '14): runs the workload
 * once on a RecordingFileSystem, then for crash points across the recorded log builds the
 * states a power cut could leave there (CrashModel: round 0 loses everything unsynced, round 1
 * keeps everything, later rounds sample), writes each distinct one to a directory, reopens the
 * real store on it and lets the workload verify it against what was acknowledged.
 */
export async function checkCrashConsistency<Op>(workload: CrashWorkload<Op>, options: CrashCheckOptions): Promise<CrashReport> {
  const started = performance.now(); // clock-ok: only reported, never decides anything
  const scratch = await mkdtemp(join(await scratchParent(), 'baton-crash-'));
  try {
    const root = join(scratch, 'run');
    await mkdir(root);
    const recording = new RecordingFileSystem(root, options.recording);
    const history = new CrashHistory<Op>(() => recording.operations.length);
    const rng = new SeededRng(options.seed);
    const running = performance.now(); // clock-ok: only reported
    await workload.run({ dir: root, files: new DurableFiles(recording), rng: rng.fork('workload'), history });
    const run = performance.now() - running; // clock-ok: only reported
    const operations = recording.operations;
    const model = new CrashModel(operations);
    const points = options.point !== undefined ? [options.point] : Array.from({ length: operations.length + 1 }, (_, i) => i);
    const verifyFiles = new DurableFiles(withoutSyncs(nodeFileSystem));
    const seen = new Set<string>();
    const failures: CrashFailure[] = [];
    const maxFailures = options.maxFailures ?? 1;
    let explored = 0;
    let idleRounds = 0;
    const phases = { model: 0, check: 0 };
    // A few states are checked at once: the store's reads and writes overlap in the thread pool.
    let batch: { point: number; round: number; state: CrashState; told: HistoryEntry<Op>[] }[] = [];
    const check = async () => {
      const checking = performance.now(); // clock-ok: only reported
      const results = await Promise.all(batch.map((b, lane) => verifyState(workload, b.state, b.told, verifyFiles, join(scratch, `state-${lane}`))));
      phases.check += performance.now() - checking; // clock-ok: only reported
      results.forEach((message, k) => {
        const { point, round, state } = batch[k];
        if (message !== undefined && failures.length < maxFailures) {
          failures.push({ point, round, after: point === 0 ? '(nothing)' : describeOperation(operations[point - 1]), message, lost: state.lost() });
        }
      });
      batch = [];
    };
    const states = rng.fork('states');
    rounds: for (let round = 0; round < MAX_ROUNDS; round++) {
      const fresh = explored;
      for (const point of points) {
        if (explored >= options.states || failures.length >= maxFailures) break rounds;
        const choice: CrashChoice = round === 0 ? 'lose-unsynced' : round === 1 ? 'keep-everything' : 'sampled';
        const building = performance.now(); // clock-ok: only reported
        const state = model.state(point, choice, states.fork(`${point}/${round}`));
        phases.model += performance.now() - building; // clock-ok: only reported
        const told = history.at(point);
        // One tree is one state per set of promises made before the crash: checked once each.
        const key = `${state.signature} ${told.map((h) => h.outcome[0]).join('')}`;
        if (seen.has(key)) continue;
        seen.add(key);
        explored++;
        batch.push({ point, round, state, told });
        if (batch.length === LANES) await check();
      }
      // Two sampled rounds in a row that found no new state anywhere: the space is (about) exhausted.
      idleRounds = round >= 2 && explored === fresh ? idleRounds + 1 : 0;
      if (idleRounds >= 2) break;
    }
    await check();
    const seconds = (performance.now() - started) / 1000; // clock-ok: as above
    const ms = (n: number) => Math.round(n) / 1000;
    const time = { run: ms(run), model: ms(phases.model), check: ms(phases.check) };
    return { store: options.store, seed: options.seed, operations: operations.length, explored, failures, seconds, phases: time };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

async function verifyState<Op>(
  workload: CrashWorkload<Op>,
  state: CrashState,
  history: HistoryEntry<Op>[],
  files: DurableFiles,
  dir: string,
): Promise<string | undefined> {
  rmSync(dir, { recursive: true, force: true });
  materialise(state.image, dir);
  try {
    await workload.verify({ dir, files, history });
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Where crash states are written: CRASH_DIR if set, else memory (/dev/shm) where there is one.
 * The medium does not change what is checked (the states are built by the model, and nothing is
 * synced), but a disk that discards freed blocks makes each state's removal cost milliseconds.
 */
async function scratchParent(): Promise<string> {
  if (process.env.CRASH_DIR) return process.env.CRASH_DIR;
  try {
    await access('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

/**
 * Writes a crash state's tree under `dir` (created). Synchronously: a state is hundreds of small
 * files, and a round trip to the thread pool for each costs more than writing it.
 */
export function materialise(image: CrashImage, dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const d of image.directories) mkdirSync(join(dir, d));
  for (const f of image.files) {
    if (f.sameAs !== undefined) linkSync(join(dir, f.sameAs), join(dir, f.path));
    else writeFileSync(join(dir, f.path), f.bytes);
  }
}

/** A file system whose syncs do nothing: for reopening crash states, which never crash again. */
export function withoutSyncs(inner: FileSystem): FileSystem {
  return {
    ...inner,
    async openForWrite(path, mode, permissions) {
      const file = await inner.openForWrite(path, mode, permissions);
      return {
        write: (bytes) => file.write(bytes),
        truncate: (length) => file.truncate(length),
        sync: async () => {},
        datasync: async () => {},
        close: () => file.close(),
      };
    },
    syncDirectory: async () => {},
  };
}
