import { decodeEntries, encodeEntries, walCorruption } from './wal-codec.js';
import { WalUnavailableError, type StreamWal, type WalEntry } from './wal.js';

/**
 * The few calls a WAL needs from a disk, shaped like the simulation's SimDisk, so tests and the
 * simulation run the real WAL code against a disk that loses unsynced bytes on a crash.
 */
export interface WalDisk {
  append(key: string, bytes: Uint8Array): void;
  write(key: string, bytes: Uint8Array): void;
  read(key: string): Uint8Array | undefined;
  sync(key?: string): void;
}

/**
 * A WAL on a WalDisk. `kill` models the process dying: the instance refuses everything after
 * it, so a crashed node's leftover async work cannot touch the disk its successor recovers from.
 */
export class DiskWal implements StreamWal {
  private dead = false;

  constructor(
    private readonly disk: WalDisk,
    private readonly key = 'streams.wal',
  ) {
    // A torn tail from an earlier crash is cut before anything is appended after it; damage
    // anywhere else is refused, as by the file WAL.
    const bytes = disk.read(key);
    if (bytes) {
      const { validBytes, damage } = decodeEntries(bytes);
      if (damage) throw walCorruption(key, '<wal dir>', damage);
      if (validBytes !== bytes.length) {
        disk.write(key, bytes.slice(0, validBytes));
        disk.sync(key);
      }
    }
  }

  async append(entries: readonly WalEntry[]): Promise<void> {
    this.checkAlive();
    this.disk.append(this.key, encodeEntries(entries));
    // Yield between write and sync: a crash can fall in between, as on a real disk.
    await Promise.resolve();
    this.checkAlive();
    this.disk.sync(this.key);
  }

  async replay(): Promise<WalEntry[]> {
    this.checkAlive();
    const decoded = decodeEntries(this.disk.read(this.key) ?? new Uint8Array(0));
    if (decoded.damage) throw walCorruption(this.key, '<wal dir>', decoded.damage);
    return decoded.entries;
  }

  async rewrite(entries: readonly WalEntry[]): Promise<void> {
    this.checkAlive();
    this.disk.write(this.key, encodeEntries(entries));
    this.disk.sync(this.key);
  }

  async close(): Promise<void> {
    this.dead = true;
  }

  kill(): void {
    this.dead = true;
  }

  private checkAlive(): void {
    if (this.dead) throw new WalUnavailableError('the WAL was closed (the node stopped)');
  }
}
