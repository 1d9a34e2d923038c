import { join } from 'node:path';
import { BatonError, StoreUnavailableError } from '@baton/contracts';
import type { DurableFiles } from '@baton/kernel';
import { TempFiles } from './temp-files.js';

export interface StoreDirectoryOptions {
  /** The store's name in its errors: "fs audit store". */
  store: string;
  /** The store's own directory. */
  root: string;
  /** The store's data directories, directly under `root`. */
  subdirs: readonly string[];
  /** What an operator should check of `root` when the store fails: "is a directory and is writable". */
  check: string;
  /** How the store writes its files. */
  files: DurableFiles;
}

/**
 * A file store's own directory: its temp files under `<root>/tmp/` and the subdirectories it keeps
 * its data in. Opened once, on the first call (start or the first operation): the root is
 * created, a crashed process's temp files are cleared and the subdirectories made. A failed
 * open is not remembered, so the next call tries again (a volume mounted late, say).
 */
export class StoreDirectory {
  readonly root: string;
  readonly temps: TempFiles;
  private opening: Promise<void> | undefined;

  constructor(private readonly options: StoreDirectoryOptions) {
    this.root = options.root;
    this.temps = new TempFiles(join(options.root, 'tmp'), options.files);
  }

  open(): Promise<void> {
    this.opening ??= this.prepare().catch((error: unknown) => {
      this.opening = undefined;
      throw this.unavailable(error, `cannot prepare the store directory ${this.root}`);
    });
    return this.opening;
  }

  /**
   * A file system failure as the store contracts report it: StoreUnavailableError saying what
   * failed, why, and what to check. Baton's own errors (a conflict, a precondition) pass as they are.
   */
  unavailable(error: unknown, what: string): BatonError {
    if (error instanceof BatonError) return error;
    const detail = error instanceof Error ? error.message : String(error);
    return new StoreUnavailableError(
      this.options.store,
      `${what} (${detail}); check that ${this.root} ${this.options.check}`,
      { cause: error },
    );
  }

  private async prepare(): Promise<void> {
    await this.options.files.createDirectory(this.root, { parents: true });
    await this.temps.clear();
    for (const dir of this.options.subdirs) await this.options.files.createDirectory(dir);
  }
}
