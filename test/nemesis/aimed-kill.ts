import { watch, type FSWatcher } from 'node:fs';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import type { ClusterMember } from './cluster.js';

/**
 * A stretch of a member's durable code (a WAL compaction, a put into a file store, a Raft
 * snapshot being installed) that a kill -9 is aimed at. Such a stretch leaves a file behind
 * while it runs (a temp file not yet renamed into place, a snapshot file the log does not name
 * yet): its appearance opens the window, and with the member stopped its presence says the
 * member is still inside.
 */
export interface DurableWindow {
  /** What the kill aims at, for the summary: "WAL compaction". */
  label: string;
  /** The directories whose new files may open the window (asked again while aiming: a store makes its temp directory at start). */
  directories(): Promise<string[]>;
  /** A new file `name` in `dir` that may mean the member entered the window. */
  opens(dir: string, name: string): boolean;
  /** Asked while the member is stopped (SIGSTOP): is it inside the window now? */
  inside(dir: string, name: string): Promise<boolean>;
}

/** One member a kill may be aimed at, with the window it is aimed at in that member. */
export interface AimCandidate {
  member: ClusterMember;
  window: DurableWindow;
}

export interface AimOutcome {
  /** The member killed inside its window; undefined when none was caught before the deadline. */
  killed?: string;
  /** How often a member was stopped on a new file and found already past the window. */
  late: number;
}

/** How often the directories are listed again, for those made since aiming began. */
const RESCAN_MS = 100;

/**
 * Aims a kill -9 at a durable window: watches (inotify) the candidates' directories, stops a
 * member with SIGSTOP the moment a file that opens its window appears, and asks with the member
 * frozen whether it is still inside: if so, SIGKILL (so the kill provably landed inside), else
 * SIGCONT and the next file. Ends at the first landed kill, or at `ms` (or `signal`) with every
 * member left running. `armed` runs once the watches are in place (a restart whose recovery is
 * aimed at starts there). Which file comes when is up to real time, not the seed.
 */
export async function killInside(
  candidates: readonly AimCandidate[],
  ms: number,
  signal: AbortSignal,
  armed?: () => void,
): Promise<AimOutcome> {
  const clock = new SystemClock();
  const watchers = new Map<string, FSWatcher>();
  const outcome: AimOutcome = { late: 0 };
  let inspecting = false;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));

  const onFile = (candidate: AimCandidate, dir: string, name: string) => {
    const { member, window } = candidate;
    if (inspecting || outcome.killed || !member.process.running || member.process.isPaused) return;
    if (!window.opens(dir, name)) return;
    // Stopped at once, in the watcher's own callback: every await here is time the member runs on.
    member.process.pause();
    inspecting = true;
    void window
      .inside(dir, name)
      .catch(() => false)
      .then(async (inside) => {
        if (inside && !outcome.killed && !signal.aborted) {
          outcome.killed = member.id;
          await member.process.kill();
          finish();
        } else {
          outcome.late += 1;
          member.process.resume();
        }
      })
      .finally(() => (inspecting = false));
  };

  const watchNew = async () => {
    for (const candidate of candidates) {
      for (const dir of await candidate.window.directories().catch(() => [])) {
        const key = `${candidate.member.id}\0${dir}`;
        if (watchers.has(key)) continue;
        try {
          const watcher = watch(dir, (_event, name) => {
            if (name) onFile(candidate, dir, name.toString());
          });
          // A watched directory removed (a temp directory of a process that exited) is forgotten.
          watcher.on('error', () => {
            watcher.close();
            watchers.delete(key);
          });
          watchers.set(key, watcher);
        } catch {
          // Not there yet (or gone): the next scan tries again.
        }
      }
    }
  };

  const deadline = clock.now() + ms;
  try {
    await watchNew();
    armed?.();
    while (!outcome.killed && !signal.aborted && clock.now() < deadline) {
      await Promise.race([finished, clock.sleep(RESCAN_MS, signal).catch(() => undefined)]);
      if (!outcome.killed) await watchNew();
    }
    // An inspection still running when time ran out settles before the members are handed back.
    while (inspecting) await clock.sleep(5);
  } finally {
    for (const watcher of watchers.values()) watcher.close();
  }
  return outcome;
}
