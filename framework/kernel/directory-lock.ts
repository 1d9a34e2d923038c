import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from '@baton/contracts';

/** Another live process holds the lock: two writers of one WAL or Raft log would corrupt it. */
export class DirectoryLockedError extends BatonError {
  constructor(
    readonly dir: string,
    readonly holderPid: number,
    message: string,
  ) {
    super('directory_locked', message);
  }
}

export interface DirectoryLock {
  readonly path: string;
  /** Removes the lock file; a second call does nothing (the lock may be another process's by then). */
  release(): Promise<void>;
}

export interface DirectoryLockOptions {
  /** The lock file's name inside the directory. */
  file: string;
  /** Says who holds it and what to do, e.g. `${dir} is in use by stream node pid ${pid}: stop it first`. */
  inUse(dir: string, pid: number): string;
}

/**
 * An exclusive lock on a directory: `<dir>/<file>`, created with O_EXCL and holding this
 * process's pid. A second process is refused while the holder lives; a lock left by a process
 * that is gone (killed with SIGKILL, a power cut) is taken over, as the holder can no longer
 * write. The pid check and the take-over are not one atomic step, so two starters racing for a
 * stale lock are settled by the O_EXCL create that follows: one of them wins, the other is told
 * to retry.
 */
export async function lockDirectory(dir: string, options: DirectoryLockOptions): Promise<DirectoryLock> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, options.file);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx', 0o600);
      try {
        await handle.writeFile(`${process.pid}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      let released: Promise<void> | undefined;
      return { path, release: () => (released ??= rm(path, { force: true })) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await lockHolder(path);
    if (holder !== undefined && processIsAlive(holder)) {
      throw new DirectoryLockedError(dir, holder, options.inUse(dir, holder));
    }
    await rm(path, { force: true });
  }
  throw new DirectoryLockedError(dir, 0, `could not lock ${path}: another process is taking it right now; try again`);
}

/** The pid a lock file names, or undefined when it names none (empty, half-written). */
export async function lockHolder(path: string): Promise<number | undefined> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** True while a process with this pid exists (EPERM: it exists, it is not ours). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
