import { chmod, link, mkdir, open, readdir, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';

/**
 * How a file is opened for writing: `append` (created if missing, every write at the end),
 * `create` (a new file; EEXIST when the name is taken), `existing` (an existing file, written
 * from its start; ENOENT when missing).
 */
export type WriteMode = 'append' | 'create' | 'existing';

/** A file open for writing. Writes go at the file's end (`append`) or one after another from the start. */
export interface WritableFile {
  /** Writes all of `bytes`; durable only after `sync` or `datasync`. */
  write(bytes: Uint8Array): Promise<void>;
  /** Cuts the file to `length` bytes; durable only after a sync. */
  truncate(length: number): Promise<void>;
  /** fsync: the file's content and attributes reach the disk (not its name: that is the directory's). */
  sync(): Promise<void>;
  /** fdatasync: the content, and the size that reads need, reach the disk. */
  datasync(): Promise<void>;
  close(): Promise<void>;
}

/** One entry of a directory. */
export interface DirectoryEntry {
  name: string;
  directory: boolean;
}

/**
 * The file-system calls that change what is on disk, and the few reads the durable-file code
 * needs to go with them: the seam under framework/kernel/durable-files.ts. Errors are Node's
 * (`code` ENOENT, EEXIST...), so callers tell the cases apart as they would with node:fs. The
 * crash-consistency harness records every call through this seam, and rebuilds from the record
 * every state a power cut could leave.
 */
export interface FileSystem {
  openForWrite(path: string, mode: WriteMode, permissions?: number): Promise<WritableFile>;
  /** Creates one directory (EEXIST if the name is taken, ENOENT if the parent is missing). */
  mkdir(path: string, permissions?: number): Promise<void>;
  /** Atomically points `to` at what `from` names, replacing what `to` named. */
  rename(from: string, to: string): Promise<void>;
  /** A second name for `from`'s file; EEXIST when `to` is taken (create-if-absent). */
  link(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** Removes an empty directory. */
  rmdir(path: string): Promise<void>;
  chmod(path: string, permissions: number): Promise<void>;
  /** fsync of a directory: the names created, renamed or removed in it reach the disk. */
  syncDirectory(path: string): Promise<void>;
  readdir(path: string): Promise<DirectoryEntry[]>;
}

/** The seam on node:fs: what every store uses outside tests. */
export const nodeFileSystem: FileSystem = {
  // Without a mode, what Node's own calls use (0o666 files, 0o777 directories), narrowed by the
  // process umask: a deployment that shares a store between users (umask 002, setgid group
  // directories) keeps its group-writable files and directories.
  async openForWrite(path, mode, permissions = 0o666) {
    return new NodeWritableFile(await open(path, mode === 'append' ? 'a' : mode === 'create' ? 'wx' : 'r+', permissions));
  },
  async mkdir(path, permissions = 0o777) {
    await mkdir(path, { mode: permissions });
  },
  rename: (from, to) => rename(from, to),
  link: (from, to) => link(from, to),
  unlink: (path) => unlink(path),
  rmdir: (path) => rmdir(path),
  chmod: (path, permissions) => chmod(path, permissions),
  async syncDirectory(path) {
    const handle = await open(path, 'r');
    try {
      await handle.sync();
    } catch (error) {
      // A few file systems cannot fsync a directory and say so; their entries are durable anyway.
      if ((error as NodeJS.ErrnoException).code !== 'EINVAL') throw error;
    } finally {
      await handle.close();
    }
  },
  async readdir(path) {
    return (await readdir(path, { withFileTypes: true })).map((e) => ({ name: e.name, directory: e.isDirectory() }));
  },
};

class NodeWritableFile implements WritableFile {
  constructor(private readonly handle: FileHandle) {}

  async write(bytes: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < bytes.length) {
      const { bytesWritten } = await this.handle.write(bytes, offset, bytes.length - offset);
      offset += bytesWritten;
    }
  }

  truncate(length: number): Promise<void> {
    return this.handle.truncate(length);
  }

  sync(): Promise<void> {
    return this.handle.sync();
  }

  datasync(): Promise<void> {
    return this.handle.datasync();
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** The errno code of a Node fs error (`ENOENT`...), or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
