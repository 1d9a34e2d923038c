import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import {
  type BatonError,
  PreconditionFailedError,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
} from '@baton/contracts';
import { durableFiles, type DurableFiles, errnoCode, type Lifecycle } from '@baton/kernel';
import {
  DIRECTORY_SUFFIX,
  objectPathSegments,
  parseTreeEntry,
  type TreeEntry,
} from './object-key-path.js';
import { StoreDirectory } from './store-directory.js';

const STORE = 'fs object store';
const DEFAULT_LIST_LIMIT = 1000;
/** Attempts to place a file while a concurrent delete prunes the directories it needs. */
const PLACE_ATTEMPTS = 8;

export interface FsObjectStoreOptions {
  /** The store's directory; created on start if missing. One process per directory. */
  dir: string;
  /** How the files are written; the real file system by default (the crash harness records it). */
  files?: DurableFiles;
}

/**
 * An ObjectStore on the local file system: one file per object under `<dir>/objects/` (see
 * object-key-path.ts for the layout). A put writes and fsyncs a temp file in `<dir>/tmp/`,
 * then renames it into place (or links it, for ifAbsent, which fails atomically when the name
 * exists) and fsyncs the directory, so a resolved put survives a crash and a reader never sees
 * a partial object. Any file system failure is a StoreUnavailableError; a missing key is only
 * reported as missing while the store's own directory is there to say so.
 */
export class FsObjectStore implements ObjectStore, Lifecycle {
  readonly supports = { conditionalPut: true };
  readonly dir: string;
  private readonly objectsDir: string;
  private readonly directory: StoreDirectory;
  private readonly files: DurableFiles;

  constructor(options: FsObjectStoreOptions) {
    this.dir = resolve(options.dir);
    this.files = options.files ?? durableFiles;
    this.objectsDir = join(this.dir, 'objects');
    this.directory = new StoreDirectory({
      store: STORE,
      root: this.dir,
      subdirs: [this.objectsDir],
      check: 'exists, is a directory and is writable',
      files: this.files,
    });
  }

  /** Creates the directories and clears temp files a crash left behind. */
  async start(): Promise<void> {
    await this.open();
  }

  async put(key: string, bytes: Uint8Array, options?: PutOptions): Promise<void> {
    const path = this.pathOf(key);
    if (!(bytes instanceof Uint8Array)) {
      throw new TypeError(
        `put(${JSON.stringify(key)}): bytes must be a Uint8Array, got ${typeof bytes}`,
      );
    }
    await this.open();
    let temp: string | undefined;
    try {
      temp = await this.directory.temps.write(bytes);
      const from = temp;
      // The directory is gone after us only if a racing delete removed the object and pruned it.
      const vanish = { directoryMayVanish: true };
      if (options?.ifAbsent) {
        await this.place(path, () => this.files.link(from, path, vanish), key);
      } else {
        await this.place(path, () => this.files.rename(from, path, vanish), key);
        temp = undefined;
      }
    } catch (error) {
      throw this.unavailable(error, `cannot write object ${JSON.stringify(key)}`);
    } finally {
      if (temp) await this.files.discard(temp).catch(() => undefined);
    }
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const path = this.pathOf(key);
    await this.open();
    try {
      const buffer = await readFile(path);
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return this.absent();
      throw this.unavailable(error, `cannot read object ${JSON.stringify(key)}`);
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const path = this.pathOf(key);
    await this.open();
    try {
      const stats = await stat(path);
      if (!stats.isFile()) throw new Error(`${path} is not a regular file`);
      return { key, size: stats.size };
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return this.absent();
      throw this.unavailable(error, `cannot read object ${JSON.stringify(key)}`);
    }
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
    await this.open();
    try {
      if (!(await this.files.remove(path))) return this.absent();
    } catch (error) {
      throw this.unavailable(error, `cannot delete object ${JSON.stringify(key)}`);
    }
    await this.pruneEmptyDirectories(dirname(path));
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const limit = options.limit ?? DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`${STORE} list: limit must be a positive integer, got ${String(limit)}`);
    }
    await this.open();
    const parts = prefix.split('/');
    const partial = parts.pop()!;
    let start: string;
    try {
      // The whole segments of the prefix name one directory; a key could not live anywhere else.
      start = join(this.objectsDir, ...objectPathSegments([...parts, 'x'].join('/')).slice(0, -1));
    } catch {
      // No valid key starts with this prefix ("..", NUL, a leading "/"...).
      return { objects: [] };
    }
    const found: ObjectInfo[] = [];
    try {
      // One object past the page tells whether `next` is needed.
      await this.collect(
        start,
        parts.map((p) => `${p}/`).join(''),
        partial,
        options.startAfter,
        found,
        limit + 1,
      );
    } catch (error) {
      throw this.unavailable(error, `cannot list prefix ${JSON.stringify(prefix)}`);
    }
    if (found.length === 0) await this.absent();
    const objects = found.slice(0, limit);
    return found.length > limit ? { objects, next: objects[objects.length - 1].key } : { objects };
  }

  /**
   * Appends to `out`, in key order, the objects under `dir` (whose keys all start with
   * `keyPrefix`) whose next segment starts with `segmentPrefix` and whose key is after
   * `startAfter`, until `out` holds `want`. Siblings are visited in the order of their keys: an
   * object `x` as "x", a directory `x` as "x/", because every key below it starts with "x/".
   */
  private async collect(
    dir: string,
    keyPrefix: string,
    segmentPrefix: string,
    startAfter: string | undefined,
    out: ObjectInfo[],
    want: number,
  ): Promise<void> {
    const entries: (TreeEntry & { name: string; order: string })[] = [];
    for (const name of await readDirectory(dir)) {
      const entry = parseTreeEntry(name);
      if (!entry || !entry.segment.startsWith(segmentPrefix)) continue;
      const order = keyPrefix + entry.segment + (entry.kind === 'directory' ? '/' : '');
      entries.push({ ...entry, name, order });
    }
    entries.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
    for (const entry of entries) {
      if (out.length >= want) return;
      const path = join(dir, entry.name);
      if (entry.kind === 'object') {
        if (startAfter !== undefined && entry.order <= startAfter) continue;
        const size = await sizeOf(path);
        if (size !== undefined) out.push({ key: entry.order, size });
      } else {
        // Every key below starts with entry.order: all of them sort before startAfter when the
        // directory's prefix does and is not a prefix of startAfter.
        if (
          startAfter !== undefined &&
          entry.order < startAfter &&
          !startAfter.startsWith(entry.order)
        )
          continue;
        await this.collect(path, entry.order, '', startAfter, out, want);
      }
    }
  }

  /** Runs `op` (a rename or link to `path`), creating the directories it needs on ENOENT. */
  private async place(path: string, op: () => Promise<void>, key: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await op();
        return;
      } catch (error) {
        if (errnoCode(error) === 'EEXIST') throw new PreconditionFailedError(key);
        if (errnoCode(error) !== 'ENOENT' || attempt >= PLACE_ATTEMPTS) throw error;
      }
      try {
        await this.makeDirectories(dirname(path));
      } catch (error) {
        // ENOENT: a concurrent delete pruned a directory on the way down; try again.
        if (errnoCode(error) !== 'ENOENT' || attempt >= PLACE_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * Creates the directories from `objects/` down to `dir`, one level at a time and never
   * `objects/` itself: if the store's directory vanished (an unmounted volume), writing must
   * fail rather than recreate an empty store in its place.
   */
  private async makeDirectories(dir: string): Promise<void> {
    const relative = dir.slice(this.objectsDir.length + 1);
    if (relative === '') return;
    let parent = this.objectsDir;
    for (const name of relative.split('/')) {
      const child = join(parent, name);
      await this.files.createDirectory(child);
      parent = child;
    }
  }

  /** Removes directories a delete left empty, so the tree does not fill with dead branches. */
  private async pruneEmptyDirectories(dir: string): Promise<void> {
    for (let current = dir; current.startsWith(this.objectsDir + '/'); current = dirname(current)) {
      if (!current.endsWith(DIRECTORY_SUFFIX)) return;
      try {
        await this.files.removeEmptyDirectory(current);
      } catch {
        // Not empty (or already gone, or refused): the object is deleted either way.
        return;
      }
    }
  }

  private pathOf(key: string): string {
    return join(this.objectsDir, ...objectPathSegments(key));
  }

  /**
   * What a missing file means: absent, if the store's directory is there; otherwise the store
   * is not really reachable (unmounted, removed), and "absent" would be a wrong answer.
   */
  private async absent(): Promise<undefined> {
    try {
      const stats = await stat(this.objectsDir);
      if (stats.isDirectory()) return undefined;
      throw new Error(`${this.objectsDir} is not a directory`);
    } catch (error) {
      throw this.unavailable(error, `the store directory ${this.objectsDir} is missing`);
    }
  }

  private open(): Promise<void> {
    return this.directory.open();
  }

  private unavailable(error: unknown, what: string): BatonError {
    return this.directory.unavailable(error, what);
  }
}

/** A directory's names; a directory that vanished (pruned concurrently) holds nothing. */
async function readDirectory(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return [];
    throw error;
  }
}

/** A listed file's size; undefined when it was deleted between readdir and stat. */
async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}
