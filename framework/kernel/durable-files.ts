import { basename, dirname, join } from 'node:path';
import { errnoCode, nodeFileSystem, type FileSystem, type WritableFile } from './file-system.js';

export interface NewFileOptions {
  /** The file's permission bits, set exactly (whatever the umask): 0o600 for a file with secrets. */
  permissions?: number;
}

export interface PlacedFileOptions extends NewFileOptions {
  /** Where the file is written before it is put in place; by default `<path>.tmp` beside it. */
  temp?: string;
}

export interface DirectoryOptions {
  /** Create missing parents too (each one durably), as `mkdir -p` does. */
  parents?: boolean;
  /** The directory's permission bits, set exactly, on a new directory and an existing one alike. */
  permissions?: number;
}

export interface NameChangeOptions {
  /**
   * The directory may be removed under the new name's feet by a concurrent delete that pruned it
   * (the fs object store): its fsync then has nothing left to make durable.
   */
  directoryMayVanish?: boolean;
}

/**
 * The one way Baton writes a file that must survive a power cut, over a FileSystem seam. The
 * rules it keeps, so no store has to: a file's bytes are fsynced before its name points at
 * them; a name that was created, renamed, linked or removed is durable only once its directory
 * is fsynced; an appended byte only once the file is fdatasynced. Every store goes through here
 * (eslint.config.js refuses node:fs writes elsewhere), and the crash-consistency harness
 * (framework/testing/crash) replays what it issued to every state a power cut can leave.
 */
export class DurableFiles {
  constructor(readonly fs: FileSystem = nodeFileSystem) {}

  /**
   * A new file at `path` holding `bytes`, fsynced: the first half of putting a file in place (its
   * name is not durable yet). EEXIST when the name is taken.
   */
  async writeNew(path: string, bytes: Uint8Array, options: NewFileOptions = {}): Promise<void> {
    const file = await this.fs.openForWrite(path, 'create', options.permissions);
    try {
      await file.write(bytes);
      await file.sync();
    } catch (error) {
      await file.close().catch(() => undefined);
      await this.fs.unlink(path).catch(() => undefined);
      throw error;
    }
    await file.close();
    if (options.permissions !== undefined) await this.fs.chmod(path, options.permissions);
  }

  /** Renames `from` to `to` (replacing it) and fsyncs `to`'s directory: after a crash, `to` is old or new, never a mix. */
  async rename(from: string, to: string, options: NameChangeOptions = {}): Promise<void> {
    await this.fs.rename(from, to);
    await this.syncDirectoryOf(to, options);
  }

  /** Gives `from`'s file the name `to` and fsyncs `to`'s directory; EEXIST, atomically, when `to` exists. */
  async link(from: string, to: string, options: NameChangeOptions = {}): Promise<void> {
    await this.fs.link(from, to);
    await this.syncDirectoryOf(to, options);
  }

  /** Replaces `path` with `bytes` atomically and durably: temp, fsync, rename, fsync the directory. */
  async replace(path: string, bytes: Uint8Array, options: PlacedFileOptions = {}): Promise<void> {
    const temp = await this.freshTemp(path, options);
    await this.writeNew(temp, bytes, options);
    try {
      await this.rename(temp, path);
    } catch (error) {
      await this.discard(temp).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Creates `path` holding `bytes` unless it exists, atomically and durably (temp, fsync, link,
   * fsync the directory): false, and nothing changed, when it existed.
   */
  async createIfAbsent(path: string, bytes: Uint8Array, options: PlacedFileOptions = {}): Promise<boolean> {
    const temp = await this.freshTemp(path, options);
    await this.writeNew(temp, bytes, options);
    try {
      await this.link(temp, path);
      return true;
    } catch (error) {
      if (errnoCode(error) === 'EEXIST') return false;
      throw error;
    } finally {
      await this.discard(temp).catch(() => undefined);
    }
  }

  /** Opens (creating) an append-only file: see AppendOnlyFile. */
  async openAppend(path: string): Promise<AppendOnlyFile> {
    return new AppendOnlyFile(await this.fs.openForWrite(path, 'append'), () => this.syncDirectoryOf(path));
  }

  /**
   * Creates a directory and fsyncs its parent, unless it exists; true when it was created.
   * Without `parents`, a missing parent is an error (ENOENT): a store whose own directory
   * vanished (an unmounted volume) must fail, not start again empty.
   */
  async createDirectory(path: string, options: DirectoryOptions = {}): Promise<boolean> {
    const created = await this.makeDirectory(path, options);
    if (options.permissions !== undefined) await this.fs.chmod(path, options.permissions);
    return created;
  }

  /** Removes a file and fsyncs its directory; false when there was none. */
  async remove(path: string): Promise<boolean> {
    try {
      await this.fs.unlink(path);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return false;
      throw error;
    }
    await this.syncDirectoryOf(path);
    return true;
  }

  /**
   * Removes a file nobody reads (a temp file that was linked into place or failed): not made
   * durable, since if it comes back after a power cut it is junk again. A missing file is fine.
   */
  async discard(path: string): Promise<void> {
    await this.fs.unlink(path).catch((error: unknown) => {
      if (errnoCode(error) !== 'ENOENT') throw error;
    });
  }

  /**
   * Removes an empty directory. Not made durable: an empty directory that comes back after a
   * power cut holds nothing, and whoever needs it again finds it there.
   */
  async removeEmptyDirectory(path: string): Promise<void> {
    await this.fs.rmdir(path);
  }

  /**
   * Removes a directory and everything under it, for leftovers nobody reads (a crashed
   * process's temp files): not made durable, since what comes back is junk again.
   */
  async removeTree(path: string): Promise<void> {
    let entries;
    try {
      entries = await this.fs.readdir(path);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return;
      if (errnoCode(error) !== 'ENOTDIR') throw error;
      return this.discard(path);
    }
    for (const entry of entries) {
      const child = join(path, entry.name);
      if (entry.directory) await this.removeTree(child);
      else await this.discard(child);
    }
    await this.fs.rmdir(path).catch((e: unknown) => {
      if (errnoCode(e) !== 'ENOENT') throw e;
    });
  }

  /** Cuts a file to `length` bytes, durably (a torn tail a crash left). */
  async truncate(path: string, length: number): Promise<void> {
    const file = await this.fs.openForWrite(path, 'existing');
    try {
      await file.truncate(length);
      await file.sync();
    } finally {
      await file.close();
    }
  }

  /** Makes the names created, renamed or removed in `dir` durable. */
  syncDirectory(dir: string): Promise<void> {
    return this.fs.syncDirectory(dir);
  }

  private async syncDirectoryOf(path: string, options: NameChangeOptions = {}): Promise<void> {
    try {
      await this.fs.syncDirectory(dirname(path));
    } catch (error) {
      if (!(options.directoryMayVanish && errnoCode(error) === 'ENOENT')) throw error;
    }
  }

  private async makeDirectory(path: string, options: DirectoryOptions): Promise<boolean> {
    try {
      await this.fs.mkdir(path, options.permissions);
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'EEXIST') return false;
      if (code !== 'ENOENT' || !options.parents || dirname(path) === path) throw error;
      // Missing parents are made (each durably) with the same permissions, as mkdir -p does.
      await this.makeDirectory(dirname(path), options);
      return this.makeDirectory(path, { ...options, parents: false });
    }
    await this.syncDirectoryOf(path);
    return true;
  }

  /** The temp name for `path`, with whatever an earlier crash left under it removed. */
  private async freshTemp(path: string, options: PlacedFileOptions): Promise<string> {
    const temp = options.temp ?? join(dirname(path), `${basename(path)}.tmp`);
    await this.discard(temp);
    return temp;
  }
}

/**
 * A file only ever appended to (a WAL, a log segment). `append` writes; `sync` makes what was
 * appended durable with one fdatasync. The first sync after opening also fsyncs the directory:
 * the file may be new, or created by a process that died before making its name durable, and
 * an acknowledged append in a file whose name a power cut forgets is lost all the same.
 */
export class AppendOnlyFile {
  private nameSynced = false;

  constructor(
    private readonly file: WritableFile,
    private readonly syncName: () => Promise<void>,
  ) {}

  append(bytes: Uint8Array): Promise<void> {
    return this.file.write(bytes);
  }

  async sync(): Promise<void> {
    await this.file.datasync();
    if (!this.nameSynced) {
      await this.syncName();
      this.nameSynced = true;
    }
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

/** DurableFiles on the real file system. */
export const durableFiles = new DurableFiles();
