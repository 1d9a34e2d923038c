import { mkdir, open, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** The errno code of a Node fs error (`ENOENT`...), or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Makes a directory's entries (a rename, link, unlink or mkdir inside it) durable. Without it a
 * crash can forget a file that was fsynced and renamed into place.
 */
export async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } catch (error) {
    // A few file systems cannot fsync a directory and say so; their entries are durable anyway.
    if (errnoCode(error) !== 'EINVAL') throw error;
  } finally {
    await handle.close();
  }
}

/**
 * Creates one directory, durably (its parent is synced), unless it exists already. Never creates
 * missing parents: a store whose own directory vanished must fail, not start again empty.
 */
export async function createDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir);
    await syncDirectory(dirname(dir));
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
  }
}

let instances = 0;

/**
 * Temp files in one directory of their own, written and fsynced before they are renamed or
 * linked into place, so a reader never sees a half-written file and a crash leaves only junk in
 * the temp directory (removed at the next start), never in the data tree.
 */
export class TempFiles {
  private readonly prefix = `${process.pid}-${++instances}-`;
  private sequence = 0;

  constructor(readonly dir: string) {}

  /** Writes `bytes` to a fresh temp file, fsyncs it, and returns its path. */
  async write(bytes: Uint8Array): Promise<string> {
    for (;;) {
      const path = join(this.dir, `${this.prefix}${++this.sequence}`);
      let handle;
      try {
        handle = await open(path, 'wx', 0o644);
      } catch (error) {
        // A name left by an earlier process with the same pid: take the next one.
        if (errnoCode(error) === 'EEXIST') continue;
        throw error;
      }
      try {
        await handle.writeFile(bytes);
        await handle.sync();
        await handle.close();
        return path;
      } catch (error) {
        await handle.close().catch(() => undefined);
        await rm(path, { force: true }).catch(() => undefined);
        throw error;
      }
    }
  }

  /** Removes every leftover temp file (of a crashed process): call before any write starts. */
  async clear(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
