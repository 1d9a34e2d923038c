import { lockDirectory, DirectoryLockedError } from '@baton/kernel';
import { FailedError } from '../cli-errors.js';

/**
 * `<dataDir>/up.lock`, holding the pid of the `baton up` that runs the cluster: a second
 * `baton up` on one data dir is refused while the first lives; a lock left by a process that is
 * gone is taken over. Each node process locks its own directory as well (node.lock), so even
 * an orphan that outlived its `baton up` is never joined by a second writer.
 */
export async function lockDataDir(dataDir: string): Promise<{ release(): Promise<void> }> {
  try {
    return await lockDirectory(dataDir, {
      file: 'up.lock',
      inUse: (dir, pid) =>
        `a local cluster is already running from ${dir} (baton up, pid ${pid}): stop it with Ctrl-C, or choose another --data-dir`,
    });
  } catch (error) {
    if (error instanceof DirectoryLockedError) throw new FailedError('data-dir-in-use', error.message);
    throw error;
  }
}
