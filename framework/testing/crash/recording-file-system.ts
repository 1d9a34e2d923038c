import { relative, sep } from 'node:path';
import { nodeFileSystem, type DirectoryEntry, type FileSystem, type WritableFile, type WriteMode } from '@baton/kernel';
import { ROOT_NODE, type RecordedOperation } from './recorded-operation.js';

export interface RecordingOptions {
  /**
   * Leave directory fsyncs out of the record (and so out of every crash state), as code that
   * never fsyncs a directory would issue: shows the checker catches the names a power cut forgets.
   */
  skipDirectorySyncs?: boolean;
}

type Node = { kind: 'file'; size: number } | { kind: 'dir'; entries: Map<string, number> };

/**
 * A FileSystem that performs every call on a real directory and records it (RecordedOperation),
 * for the crash-consistency checker to rebuild what a power cut could leave at any point. Syncs
 * are recorded, not performed: the checker's model decides what was durable, and the run stays
 * fast. Calls run one at a time in the order issued, so one seed records one log. The store
 * must start from the empty `root` and change nothing under it except through this seam: a
 * path the record does not know (a file written by hand) fails the call.
 */
export class RecordingFileSystem implements FileSystem {
  readonly operations: RecordedOperation[] = [];
  private readonly nodes = new Map<number, Node>([[ROOT_NODE, { kind: 'dir', entries: new Map() }]]);
  private nextNode = ROOT_NODE + 1;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    readonly root: string,
    private readonly options: RecordingOptions = {},
    private readonly inner: FileSystem = nodeFileSystem,
  ) {}

  openForWrite(path: string, mode: WriteMode, permissions?: number): Promise<WritableFile> {
    return this.serial(async () => {
      const file = await this.inner.openForWrite(path, mode, permissions);
      const { parent, name, node } = this.locate(path);
      let id = node;
      if (id === undefined) {
        id = this.add(parent, name, { kind: 'file', size: 0 });
        this.operations.push({ kind: 'create', parent, name, node: id, path: this.show(path) });
      }
      return new RecordingFile(this, file, id, mode === 'append', this.show(path));
    });
  }

  mkdir(path: string, permissions?: number): Promise<void> {
    return this.serial(async () => {
      await this.inner.mkdir(path, permissions);
      if (!this.parts(path)?.length) throw new Error(`recording: mkdir ${path} succeeded, but it is not below the root`);
      const { parent, name } = this.locate(path);
      const node = this.add(parent, name, { kind: 'dir', entries: new Map() });
      this.operations.push({ kind: 'mkdir', parent, name, node, path: this.show(path) });
    });
  }

  rename(from: string, to: string): Promise<void> {
    return this.serial(async () => {
      await this.inner.rename(from, to);
      const source = this.locate(from);
      const target = this.locate(to);
      if (source.node === undefined) throw this.unknown(from);
      if (source.parent === target.parent && source.name === target.name) return;
      this.directory(source.parent).delete(source.name);
      this.directory(target.parent).set(target.name, source.node);
      this.operations.push({
        kind: 'rename', fromParent: source.parent, fromName: source.name, toParent: target.parent, toName: target.name,
        node: source.node, path: this.show(from), to: this.show(to),
      });
    });
  }

  link(from: string, to: string): Promise<void> {
    return this.serial(async () => {
      await this.inner.link(from, to);
      const source = this.locate(from);
      const target = this.locate(to);
      if (source.node === undefined) throw this.unknown(from);
      this.directory(target.parent).set(target.name, source.node);
      this.operations.push({
        kind: 'link', fromParent: source.parent, fromName: source.name, toParent: target.parent, toName: target.name,
        node: source.node, path: this.show(from), to: this.show(to),
      });
    });
  }

  unlink(path: string): Promise<void> {
    return this.serial(async () => {
      await this.inner.unlink(path);
      const { parent, name, node } = this.locate(path);
      if (node === undefined) throw this.unknown(path);
      this.directory(parent).delete(name);
      this.operations.push({ kind: 'unlink', parent, name, node, path: this.show(path) });
    });
  }

  rmdir(path: string): Promise<void> {
    return this.serial(async () => {
      await this.inner.rmdir(path);
      const { parent, name, node } = this.locate(path);
      if (node === undefined) throw this.unknown(path);
      this.directory(parent).delete(name);
      this.operations.push({ kind: 'rmdir', parent, name, node, path: this.show(path) });
    });
  }

  chmod(path: string, permissions: number): Promise<void> {
    // Permission bits are not part of what the checker compares: performed, not recorded.
    return this.serial(() => this.inner.chmod(path, permissions));
  }

  syncDirectory(path: string): Promise<void> {
    return this.serial(async () => {
      const parts = this.parts(path);
      // Above the root is the test's own temp directory: nothing the store wrote.
      if (parts === undefined) return;
      const node = parts.length === 0 ? ROOT_NODE : this.locate(path).node;
      if (node === undefined) throw Object.assign(new Error(`ENOENT: no such directory, fsync '${path}'`), { code: 'ENOENT' });
      if (!this.options.skipDirectorySyncs) this.operations.push({ kind: 'fsync', node, path: this.show(path) });
    });
  }

  readdir(path: string): Promise<DirectoryEntry[]> {
    return this.serial(() => this.inner.readdir(path));
  }

  /** Runs one call after every call issued before it. */
  serial<T>(call: () => Promise<T>): Promise<T> {
    const result = this.tail.then(call);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Called by a RecordingFile after its write landed: the write's offset, and the file's new size. */
  wrote(node: number, at: number | 'end', bytes: Uint8Array, path: string): number {
    const file = this.file(node);
    const offset = at === 'end' ? file.size : at;
    file.size = Math.max(file.size, offset + bytes.length);
    this.operations.push({ kind: 'write', node, offset, bytes: Uint8Array.from(bytes), path });
    return offset + bytes.length;
  }

  truncated(node: number, length: number, path: string): void {
    this.file(node).size = length;
    this.operations.push({ kind: 'truncate', node, length, path });
  }

  private file(node: number): { kind: 'file'; size: number } {
    const found = this.nodes.get(node);
    if (found?.kind !== 'file') throw new Error(`recording: node ${node} is not a file`);
    return found;
  }

  private directory(node: number): Map<string, number> {
    const found = this.nodes.get(node);
    if (found?.kind !== 'dir') throw new Error(`recording: node ${node} is not a directory`);
    return found.entries;
  }

  private add(parent: number, name: string, node: Node): number {
    const id = this.nextNode++;
    this.nodes.set(id, node);
    this.directory(parent).set(name, id);
    return id;
  }

  /** The directory holding `path`, its last name, and the node it names now (if any). */
  private locate(path: string): { parent: number; name: string; node?: number } {
    const parts = this.parts(path) ?? [];
    const name = parts.pop();
    if (name === undefined) throw new Error(`recording: ${path} is not below the root ${this.root}`);
    let parent = ROOT_NODE;
    for (const part of parts) {
      const next = this.directory(parent).get(part);
      if (next === undefined || this.nodes.get(next)?.kind !== 'dir') throw this.unknown(path);
      parent = next;
    }
    return { parent, name, node: this.directory(parent).get(name) };
  }

  /** The names from the root down to `path`: none for the root, undefined for a path outside it. */
  private parts(path: string): string[] | undefined {
    const rel = relative(this.root, path);
    if (rel === '..' || rel.startsWith(`..${sep}`)) return undefined;
    return rel === '' ? [] : rel.split(sep);
  }

  private show(path: string): string {
    return relative(this.root, path);
  }

  private unknown(path: string): Error {
    return new Error(`recording: ${path} is not in the record; was it written outside the FileSystem seam?`);
  }
}

class RecordingFile implements WritableFile {
  private position = 0;

  constructor(
    private readonly recording: RecordingFileSystem,
    private readonly inner: WritableFile,
    private readonly node: number,
    private readonly append: boolean,
    private readonly path: string,
  ) {}

  write(bytes: Uint8Array): Promise<void> {
    return this.recording.serial(async () => {
      await this.inner.write(bytes);
      this.position = this.recording.wrote(this.node, this.append ? 'end' : this.position, bytes, this.path);
    });
  }

  truncate(length: number): Promise<void> {
    return this.recording.serial(async () => {
      await this.inner.truncate(length);
      this.recording.truncated(this.node, length, this.path);
    });
  }

  sync(): Promise<void> {
    return this.recording.serial(async () => void this.recording.operations.push({ kind: 'fsync', node: this.node, path: this.path }));
  }

  datasync(): Promise<void> {
    return this.recording.serial(async () => void this.recording.operations.push({ kind: 'fdatasync', node: this.node, path: this.path }));
  }

  close(): Promise<void> {
    return this.recording.serial(() => this.inner.close());
  }
}
