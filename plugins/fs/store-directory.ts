import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createDirectory, TempFiles } from './durable-file.js';

/**
 * A file store's own directory: its temp files in `<root>/tmp/` and the subdirectories it keeps
 * its data in. Opened once, on the first call (start or the first operation): the root is
 * created, a crashed process's temp files are cleared and the subdirectories made. A failed
 * open is not remembered, so the next call tries again (a volume mounted late, say).
 */
export class StoreDirectory {
  readonly temps: TempFiles;
  private opening: Promise<void> | undefined;

  /**
   * @param subdirs the store's data directories, directly under `root`.
   * @param failure turns the cause of a failed open into the error the store raises.
   */
  constructor(
    readonly root: string,
    private readonly subdirs: readonly string[],
    private readonly failure: (error: unknown) => Error,
  ) {
    this.temps = new TempFiles(join(root, 'tmp'));
  }

  open(): Promise<void> {
    this.opening ??= this.prepare().catch((error: unknown) => {
      this.opening = undefined;
      throw this.failure(error);
    });
    return this.opening;
  }

  private async prepare(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await this.temps.clear();
    await mkdir(this.temps.dir);
    for (const dir of this.subdirs) await createDirectory(dir);
  }
}
