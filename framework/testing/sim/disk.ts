import type { Rng } from '@baton/contracts';

/** What survives a crash of one file: a synced prefix of the current bytes, or an older copy. */
type Durable = { kind: 'prefix'; length: number } | { kind: 'copy'; bytes: Uint8Array | undefined };

interface SimFile {
  exists: boolean;
  buffer: Uint8Array;
  length: number;
  durable: Durable;
  /** How the content was replaced since the last sync, if it was: in place, or by a rename. */
  replaced?: 'in-place' | 'rename';
}

export interface SimDiskStats {
  writes: number;
  appends: number;
  bytesWritten: number;
  syncs: number;
  crashes: number;
  /** Crashes that left part of an unsynced append behind. */
  tornAppends: number;
  /** Files an in-place overwrite left as a prefix of the new content. */
  tornOverwrites: number;
}

export interface CrashOptions {
  /**
   * Keep a random prefix (possibly empty, possibly all) of the bytes appended since the last
   * sync, as a disk does when the power goes mid-write. Only files changed by appends alone
   * since their last sync tear; anything else reverts to its synced content. Needs an rng.
   */
  tearUnsyncedAppends?: boolean;
  /**
   * A file overwritten in place (`write`) since its last sync comes back as its old content or
   * as any prefix of the new one, as when a rewrite is cut short: storage that must survive
   * this replaces files by `rename` instead. Needs an rng.
   */
  tearUnsyncedOverwrites?: boolean;
}

/**
 * A simulated disk: named files of bytes with explicit `sync`. What was synced survives `crash`;
 * what was not is lost (or, with tearing, partly kept), so storage built on it must write in an
 * order that stays correct after any crash: persist before acknowledging, checksum records to
 * find a torn tail. Reads and writes copy their bytes, so nobody aliases the disk's memory.
 * Appends and syncs cost O(bytes added), so a long append-only log stays cheap.
 */
export class SimDisk {
  private readonly files = new Map<string, SimFile>();
  private readonly counters: SimDiskStats = {
    writes: 0,
    appends: 0,
    bytesWritten: 0,
    syncs: 0,
    crashes: 0,
    tornAppends: 0,
    tornOverwrites: 0,
  };

  constructor(private readonly rng?: Rng) {}

  /** Replaces the whole content of `key` (creating it). Not durable until synced. */
  write(key: string, bytes: Uint8Array): void {
    const file = this.file(key);
    this.preserveDurable(file);
    file.buffer = Uint8Array.from(bytes);
    file.length = bytes.length;
    file.exists = true;
    file.replaced = 'in-place';
    this.counters.writes += 1;
    this.counters.bytesWritten += bytes.length;
  }

  /** Adds `bytes` at the end of `key` (creating it). Not durable until synced. */
  append(key: string, bytes: Uint8Array): void {
    const file = this.file(key);
    if (!file.exists) {
      this.preserveDurable(file);
      file.exists = true;
      file.length = 0;
    }
    if (file.length + bytes.length > file.buffer.length) {
      const grown = new Uint8Array(
        Math.max(file.length + bytes.length, file.buffer.length * 2, 64),
      );
      grown.set(file.buffer.subarray(0, file.length));
      file.buffer = grown;
    }
    file.buffer.set(bytes, file.length);
    file.length += bytes.length;
    this.counters.appends += 1;
    this.counters.bytesWritten += bytes.length;
  }

  /** Cuts `key` to its first `length` bytes. Not durable until synced. */
  truncate(key: string, length: number): void {
    const file = this.files.get(key);
    if (!file?.exists) throw new Error(`cannot truncate ${key}: no such file`);
    if (!Number.isInteger(length) || length < 0 || length > file.length) {
      throw new RangeError(`cannot truncate ${key} (${file.length} bytes) to ${length} bytes`);
    }
    // Cutting into the synced prefix changes bytes a crash must bring back.
    if (file.durable.kind === 'prefix' && length < file.durable.length) this.preserveDurable(file);
    file.length = length;
  }

  /**
   * Replaces `to` with the content of `from` and removes `from`, atomically: after a crash `to`
   * holds either its old synced content or all of the new one, never a mix. Durable once `to`
   * (and, for the removal, `from`) is synced.
   */
  rename(from: string, to: string): void {
    const source = this.files.get(from);
    if (!source?.exists) throw new Error(`cannot rename ${from}: no such file`);
    if (from === to) return;
    const bytes = source.buffer.slice(0, source.length);
    const target = this.file(to);
    this.preserveDurable(target);
    target.buffer = bytes;
    target.length = bytes.length;
    target.exists = true;
    target.replaced = 'rename';
    this.delete(from);
  }

  /** The current content of `key` (synced or not), or undefined if it does not exist. */
  read(key: string): Uint8Array | undefined {
    const file = this.files.get(key);
    return file?.exists ? file.buffer.slice(0, file.length) : undefined;
  }

  size(key: string): number | undefined {
    const file = this.files.get(key);
    return file?.exists ? file.length : undefined;
  }

  exists(key: string): boolean {
    return this.files.get(key)?.exists ?? false;
  }

  /** Removes `key`. Not durable until synced: a crash before that brings the file back. */
  delete(key: string): void {
    const file = this.files.get(key);
    if (!file?.exists) return;
    this.preserveDurable(file);
    file.exists = false;
    file.length = 0;
    file.buffer = new Uint8Array(0);
  }

  /** Existing keys starting with `prefix`, sorted. */
  keys(prefix = ''): string[] {
    return [...this.files.entries()]
      .filter(([key, file]) => file.exists && key.startsWith(prefix))
      .map(([key]) => key)
      .sort();
  }

  /** Makes `key` durable as it is now (or every file, without a key), as fsync does. */
  sync(key?: string): void {
    this.counters.syncs += 1;
    const targets =
      key === undefined
        ? [...this.files.values()]
        : [this.files.get(key)].filter((f) => f !== undefined);
    for (const file of targets) {
      file.replaced = undefined;
      file.durable = file.exists
        ? { kind: 'prefix', length: file.length }
        : { kind: 'copy', bytes: undefined };
    }
  }

  /** True when `key` has changes a crash would lose. */
  isDirty(key: string): boolean {
    const file = this.files.get(key);
    if (!file) return false;
    if (file.durable.kind === 'prefix') return !file.exists || file.length !== file.durable.length;
    return true;
  }

  /** The power goes: every file returns to its synced content (see CrashOptions for tearing). */
  crash(options: CrashOptions = {}): void {
    if ((options.tearUnsyncedAppends || options.tearUnsyncedOverwrites) && !this.rng) {
      throw new Error('crash() with tearing needs the SimDisk to be built with an Rng');
    }
    this.counters.crashes += 1;
    for (const [key, file] of this.files) {
      const durable = file.durable;
      const replaced = file.replaced;
      file.replaced = undefined;
      if (options.tearUnsyncedOverwrites && replaced === 'in-place' && file.exists) {
        // Any prefix of the new bytes, or (one extra outcome) the old content untouched.
        const kept = this.rng!.int(file.length + 2);
        if (kept <= file.length) {
          this.counters.tornOverwrites += 1;
          file.length = kept;
          file.durable = { kind: 'prefix', length: kept };
          continue;
        }
      }
      if (durable.kind === 'prefix') {
        const unsynced = file.length - durable.length;
        let kept = 0;
        if (options.tearUnsyncedAppends && unsynced > 0) {
          kept = this.rng!.int(unsynced + 1);
          if (kept > 0) this.counters.tornAppends += 1;
        }
        file.length = durable.length + kept;
        file.durable = { kind: 'prefix', length: file.length };
      } else if (durable.bytes === undefined) {
        this.files.delete(key);
      } else {
        file.exists = true;
        file.buffer = durable.bytes;
        file.length = durable.bytes.length;
        file.durable = { kind: 'prefix', length: file.length };
      }
    }
  }

  stats(): SimDiskStats {
    return { ...this.counters };
  }

  private file(key: string): SimFile {
    if (typeof key !== 'string' || key.length === 0) {
      throw new TypeError(`a disk key must be a non-empty string, got ${JSON.stringify(key)}`);
    }
    let file = this.files.get(key);
    if (!file) {
      file = {
        exists: false,
        buffer: new Uint8Array(0),
        length: 0,
        durable: { kind: 'copy', bytes: undefined },
      };
      this.files.set(key, file);
    }
    return file;
  }

  /** Before content is replaced, keep the synced bytes a crash must bring back. */
  private preserveDurable(file: SimFile): void {
    if (file.durable.kind === 'prefix') {
      file.durable = { kind: 'copy', bytes: file.buffer.slice(0, file.durable.length) };
    }
  }
}
