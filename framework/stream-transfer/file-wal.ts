import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { durableFiles, type AppendOnlyFile, type DurableFiles } from '@baton/kernel';
import type { CorruptRecordError } from '@baton/contracts';
import { decodeEntries, encodeEntries, walCorruption } from './wal-codec.js';
import { WalUnavailableError, type StreamWal, type WalEntry } from './wal.js';

export interface FileWalOptions {
  /** How the files are written; the real file system by default (the crash harness records it). */
  files?: DurableFiles;
  /** Told of a damaged entry found at open, before the open fails with it (the corruption metric). */
  onCorruption?: (error: CorruptRecordError) => void;
}

/**
 * The WAL of a host: one append-only file in the node's WAL directory, fdatasync'ed before an
 * append resolves (and the directory fsynced with the first one, so the file's name survives a
 * power cut too). Concurrent appends are committed together (one write, one sync), which is
 * what keeps a busy node from paying one sync per record. Compaction writes the new log beside
 * it and renames it over, then fsyncs the directory, so a power cut leaves the old log or the
 * new one.
 */
export class FileWal implements StreamWal {
  private handle?: AppendOnlyFile;
  private queue: { bytes: Uint8Array; resolve(): void; reject(error: unknown): void }[] = [];
  private writing?: Promise<void>;
  private closed = false;

  private constructor(
    private readonly path: string,
    private readonly files: DurableFiles,
  ) {}

  static async open(dir: string, options: FileWalOptions = {}): Promise<FileWal> {
    const files = options.files ?? durableFiles;
    await files.createDirectory(dir, { parents: true });
    const wal = new FileWal(join(dir, 'streams.wal'), files);
    await wal.truncateTornTail(options);
    wal.handle = await files.openAppend(wal.path);
    return wal;
  }

  append(entries: readonly WalEntry[]): Promise<void> {
    if (this.closed) return Promise.reject(new WalUnavailableError(`${this.path} is closed`));
    if (entries.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.queue.push({ bytes: encodeEntries(entries), resolve, reject });
      this.startDrain();
    });
  }

  /**
   * Starts a drain unless one runs. A drain resolves its batch before it ends, so the caller's
   * next append can queue while the drain is finishing: the end of a drain looks at the queue
   * again, or that append would wait forever (two awaited appends in a row hung).
   */
  private startDrain(): void {
    if (this.writing) return;
    this.writing = this.drain().finally(() => {
      this.writing = undefined;
      if (this.queue.length > 0) this.startDrain();
    });
  }

  async replay(): Promise<WalEntry[]> {
    await this.writing;
    const decoded = decodeEntries(await this.readAll());
    if (decoded.damage) throw walCorruption(this.path, dirname(this.path), decoded.damage);
    return decoded.entries;
  }

  async rewrite(entries: readonly WalEntry[]): Promise<void> {
    await this.writing;
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
    try {
      await this.files.replace(this.path, encodeEntries(entries), { temp: `${this.path}.compact` });
    } finally {
      // Old log or new, appends go on: a failed rewrite left the old one whole.
      this.handle = await this.files.openAppend(this.path);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.writing;
    await this.handle?.close();
    this.handle = undefined;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        const handle = this.handle;
        if (!handle) throw new WalUnavailableError(`${this.path} is not open`);
        const total = batch.reduce((n, b) => n + b.bytes.length, 0);
        const joined = new Uint8Array(total);
        let at = 0;
        for (const b of batch) {
          joined.set(b.bytes, at);
          at += b.bytes.length;
        }
        await handle.append(joined);
        await handle.sync();
        for (const b of batch) b.resolve();
      } catch (error) {
        const failure = error instanceof WalUnavailableError ? error : new WalUnavailableError(String(error), { cause: error });
        for (const b of batch) b.reject(failure);
      }
    }
  }

  private async readAll(): Promise<Uint8Array> {
    try {
      return await readFile(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Uint8Array(0);
      throw new WalUnavailableError(`cannot read ${this.path}: ${(error as Error).message}`, { cause: error });
    }
  }

  /**
   * A crash may leave half an entry at the end; cut it so new appends start on a clean line.
   * Damage before the end is never cut here: it is refused, and only `baton repair wal` cuts.
   */
  private async truncateTornTail(options: FileWalOptions): Promise<void> {
    const bytes = await this.readAll();
    const { validBytes, damage } = decodeEntries(bytes);
    if (damage) {
      const error = walCorruption(this.path, dirname(this.path), damage);
      options.onCorruption?.(error);
      throw error;
    }
    if (validBytes === bytes.length) return;
    await this.files.truncate(this.path, validBytes);
  }
}
