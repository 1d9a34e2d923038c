import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { FailedError } from '../cli-errors.js';

/**
 * `<dataDir>/up.lock`, holding the pid of the `baton up` that runs the cluster. Two clusters on
 * one data dir would write the same Raft logs and WALs from two processes and corrupt them, so
 * a second `baton up` is refused while the first lives; a lock left by a process that is gone
 * (killed with SIGKILL) is taken over.
 */
export async function lockDataDir(dataDir: string): Promise<{ release(): Promise<void> }> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, 'up.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      // Released once: a second release must not remove a lock another `baton up` took since.
      let released: Promise<void> | undefined;
      return { release: () => (released ??= rm(path, { force: true })) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
      throw new FailedError(
        'data-dir-in-use',
        `a local cluster is already running from ${dataDir} (baton up, pid ${holder}): stop it with Ctrl-C, or choose another --data-dir`,
      );
    }
    await rm(path, { force: true });
  }
  throw new FailedError(
    'data-dir-in-use',
    `could not lock ${path}: another baton up is starting on ${dataDir}; try again`,
  );
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
