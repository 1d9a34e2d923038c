import { mkdir, open, readdir, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The few file operations an append-only log needs (the Raft log, a change feed), with their
 * durability spelled out, so the same log code runs on a real directory, in memory, or on a
 * simulated disk that can crash.
 */
export interface ByteFiles {
  /** Names of the files present, sorted. */
  list(): Promise<string[]>;
  read(name: string): Promise<Uint8Array | undefined>;
  /** Appends (creating the file); durable only after `sync(name)`. */
  append(name: string, bytes: Uint8Array): Promise<void>;
  /** Makes the file's content, and its existence, durable. */
  sync(name: string): Promise<void>;
  /** Replaces the whole file atomically and durably: after a crash, old or new, never a mix. */
  replace(name: string, bytes: Uint8Array): Promise<void>;
  /** Cuts the file to `length` bytes, durably. */
  truncate(name: string, length: number): Promise<void>;
  /** Removes the file, durably. */
  remove(name: string): Promise<void>;
  close(): Promise<void>;
}

/** ByteFiles on a local directory: fdatasync on files, fsync on the directory when names change. */
export class DirectoryFiles implements ByteFiles {
  private readonly handles = new Map<string, FileHandle>();
  private readonly unsyncedNames = new Set<string>();

  constructor(readonly dir: string) {}

  async list(): Promise<string[]> {
    await mkdir(this.dir, { recursive: true });
    return (await readdir(this.dir)).filter((n) => !n.endsWith('.tmp')).sort();
  }

  async read(name: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(join(this.dir, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async append(name: string, bytes: Uint8Array): Promise<void> {
    let handle = this.handles.get(name);
    if (!handle) {
      await mkdir(this.dir, { recursive: true });
      handle = await open(join(this.dir, name), 'a');
      this.handles.set(name, handle);
      this.unsyncedNames.add(name);
    }
    let offset = 0;
    while (offset < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
      offset += bytesWritten;
    }
  }

  async sync(name: string): Promise<void> {
    await this.handles.get(name)?.datasync();
    if (this.unsyncedNames.delete(name)) await this.syncDirectory();
  }

  async replace(name: string, bytes: Uint8Array): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const tmp = join(this.dir, `${name}.tmp`);
    const handle = await open(tmp, 'w');
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, join(this.dir, name));
    await this.syncDirectory();
  }

  async truncate(name: string, length: number): Promise<void> {
    await this.handles.get(name)?.close();
    this.handles.delete(name);
    const handle = await open(join(this.dir, name), 'r+');
    try {
      await handle.truncate(length);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async remove(name: string): Promise<void> {
    await this.handles.get(name)?.close();
    this.handles.delete(name);
    this.unsyncedNames.delete(name);
    await rm(join(this.dir, name), { force: true });
    await this.syncDirectory();
  }

  async close(): Promise<void> {
    const handles = [...this.handles.values()];
    this.handles.clear();
    await Promise.all(handles.map((h) => h.close()));
  }

  private async syncDirectory(): Promise<void> {
    const handle = await open(this.dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

/**
 * ByteFiles in process memory: everything written is kept until the process ends, and nothing
 * survives it (a node without a data dir). Appends keep chunks, so a long log costs O(bytes
 * added) per append.
 */
export class MemoryFiles implements ByteFiles {
  private readonly files = new Map<string, Uint8Array[]>();

  async list(): Promise<string[]> {
    return [...this.files.keys()].sort();
  }

  async read(name: string): Promise<Uint8Array | undefined> {
    const chunks = this.files.get(name);
    return chunks && Buffer.concat(chunks);
  }

  async append(name: string, bytes: Uint8Array): Promise<void> {
    const chunks = this.files.get(name) ?? [];
    chunks.push(Uint8Array.from(bytes));
    this.files.set(name, chunks);
  }

  async sync(): Promise<void> {}

  async replace(name: string, bytes: Uint8Array): Promise<void> {
    this.files.set(name, [Uint8Array.from(bytes)]);
  }

  async truncate(name: string, length: number): Promise<void> {
    const chunks = this.files.get(name);
    if (chunks) this.files.set(name, [Buffer.concat(chunks).subarray(0, length)]);
  }

  async remove(name: string): Promise<void> {
    this.files.delete(name);
  }

  async close(): Promise<void> {}
}
