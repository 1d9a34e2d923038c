import { hostname } from 'node:os';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type DurableFiles, errnoCode } from '@baton/kernel';

let instances = 0;

/**
 * Temp files in a directory of their own, written and fsynced before they are renamed or
 * linked into place, so a reader never sees a half-written file and a crash leaves only junk in
 * the temp directory (removed at a later start), never in the data tree.
 *
 * Several processes may share one store directory (the stream nodes of a cluster share one
 * object store), so each store instance writes under `<parent>/<host>-<pid>-<n>/` and a start
 * clears only its own directory and those of processes of this host that no longer run: it
 * never removes a file another live process is about to rename into place.
 */
export class TempFiles {
  readonly dir: string;
  private readonly owner = { host: hostname(), pid: process.pid };
  private sequence = 0;

  constructor(
    readonly parent: string,
    private readonly files: DurableFiles,
  ) {
    this.dir = join(parent, `${this.owner.host}-${this.owner.pid}-${++instances}`);
  }

  /** Writes `bytes` to a fresh temp file, fsyncs it, and returns its path. */
  async write(bytes: Uint8Array): Promise<string> {
    for (;;) {
      const path = join(this.dir, String(++this.sequence));
      try {
        await this.files.writeNew(path, bytes);
        return path;
      } catch (error) {
        // A name left by an earlier process with the same pid and instance: take the next one.
        if (errnoCode(error) !== 'EEXIST') throw error;
      }
    }
  }

  /**
   * Removes the leftovers of crashed processes of this host, then makes this instance's own
   * directory: call before any write starts. Directories of other hosts sharing the volume are
   * theirs to clear.
   */
  async clear(): Promise<void> {
    await this.files.createDirectory(this.parent, { parents: true });
    for (const entry of await readdir(this.parent, { withFileTypes: true })) {
      const path = join(this.parent, entry.name);
      if (path === this.dir || !this.isLeftover(entry.name, entry.isDirectory())) continue;
      await this.files.removeTree(path);
    }
    await this.files.removeTree(this.dir);
    await this.files.createDirectory(this.dir);
  }

  /** A `<host>-<pid>-<n>` directory of this host whose process is gone, or a `<pid>-<n>-<seq>` file of the older flat layout. */
  private isLeftover(name: string, directory: boolean): boolean {
    if (directory) {
      const own = /^(.*)-(\d+)-\d+$/.exec(name);
      return own !== null && own[1] === this.owner.host && !processRuns(Number(own[2]));
    }
    const flat = /^(\d+)-\d+-\d+$/.exec(name);
    return flat !== null && !processRuns(Number(flat[1]));
  }
}

/** Whether a process with this pid runs on this host (signal 0 checks without signalling). */
function processRuns(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs under another user.
    return errnoCode(error) === 'EPERM';
  }
}
