import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { durableFiles, type AppendOnlyFile, type DurableFiles } from './durable-files.js';

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

/** ByteFiles on a local directory, written through DurableFiles (append + fdatasync, temp + rename). */
export class DirectoryFiles implements ByteFiles {
  private readonly handles = new Map<string, AppendOnlyFile>();
  private created = false;

  constructor(
    readonly dir: string,
    private readonly files: DurableFiles = durableFiles,
  ) {}

  async list(): Promise<string[]> {
    await this.createDirectory();
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
      await this.createDirectory();
      handle = await this.files.openAppend(join(this.dir, name));
      this.handles.set(name, handle);
    }
    await handle.append(bytes);
  }

  async sync(name: string): Promise<void> {
    await this.handles.get(name)?.sync();
  }

  async replace(name: string, bytes: Uint8Array): Promise<void> {
    await this.createDirectory();
    await this.files.replace(join(this.dir, name), bytes);
  }

  async truncate(name: string, length: number): Promise<void> {
    await this.closeHandle(name);
    await this.files.truncate(join(this.dir, name), length);
  }

  async remove(name: string): Promise<void> {
    await this.closeHandle(name);
    await this.files.remove(join(this.dir, name));
  }

  async close(): Promise<void> {
    const handles = [...this.handles.values()];
    this.handles.clear();
    await Promise.all(handles.map((h) => h.close()));
  }

  private async closeHandle(name: string): Promise<void> {
    await this.handles.get(name)?.close();
    this.handles.delete(name);
  }

  /** The directory, and any missing parent, made durably once. */
  private async createDirectory(): Promise<void> {
    if (this.created) return;
    await this.files.createDirectory(this.dir, { parents: true });
    this.created = true;
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
