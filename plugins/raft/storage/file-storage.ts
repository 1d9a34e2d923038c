import { crc32 } from 'node:zlib';
import type { Entry, HardState, Snapshot } from '../core/types.js';
import type { ByteFiles } from '../../../framework/kernel/byte-files.js';
import { RaftStorageCorruptError, type PersistBatch, type RaftStorage, type RecoveredState } from './raft-storage.js';

/** One log record. `base` restarts the log after index `i` (a snapshot or a compaction). */
type WalRecord = { t: 'e'; e: Entry } | { t: 'h'; h: HardState } | { t: 'base'; i: number };

const SEGMENT = /^wal-(\d{12})\.log$/;
const SNAPSHOT = /^snap-(\d{16})\.json$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function segmentName(seq: number): string {
  return `wal-${String(seq).padStart(12, '0')}.log`;
}

function snapshotName(index: number): string {
  return `snap-${String(index).padStart(16, '0')}.json`;
}

/** `crc32-hex json\n`: a torn or corrupted line fails its checksum. */
function encodeLine(value: unknown): string {
  const json = JSON.stringify(value);
  return `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

function decodeLine(line: string): unknown {
  const json = line.slice(9);
  if (line[8] !== ' ' || line.slice(0, 8) !== crc32(json).toString(16).padStart(8, '0')) {
    throw new Error('checksum mismatch');
  }
  return JSON.parse(json);
}

export interface FileRaftStorageOptions {
  /** Start a new segment once the current one exceeds this many bytes. */
  segmentBytes?: number;
}

/**
 * Raft storage as append-only log segments plus snapshot files. Each `persist` is one append
 * of checksummed records (entries, then hard state) and one fsync, so a Ready costs one sync
 * however many entries it carries. Recovery replays the segments in order; a torn record at
 * the end of the last segment (a crash mid-append) is cut off, anything else that fails its
 * checksum is corruption and refuses to start. A snapshot is written whole (atomic replace)
 * before the log records that refer to it; compaction writes a fresh segment holding the
 * retained entries, then deletes the older segments and snapshots.
 */
export class FileRaftStorage implements RaftStorage {
  private segment = 0;
  private segmentSize = 0;
  private readonly segmentBytes: number;

  constructor(
    private readonly files: ByteFiles,
    options: FileRaftStorageOptions = {},
  ) {
    this.segmentBytes = options.segmentBytes ?? 64 * 1024 * 1024;
  }

  async load(): Promise<RecoveredState> {
    const names = await this.files.list();
    const segments = names.filter((n) => SEGMENT.test(n)).sort();
    const snapshots = names.filter((n) => SNAPSHOT.test(n)).sort();
    let snapshot: Snapshot | undefined;
    if (snapshots.length > 0) {
      const name = snapshots[snapshots.length - 1];
      const bytes = await this.files.read(name);
      try {
        snapshot = decodeLine(decoder.decode(bytes).replace(/\n$/, '')) as Snapshot;
      } catch (error) {
        throw new RaftStorageCorruptError(`snapshot ${name} is unreadable: ${(error as Error).message}`);
      }
    }
    let hardState: HardState = { term: 0, vote: '', commit: 0 };
    let entries: Entry[] = [];
    let next = 1;
    for (let s = 0; s < segments.length; s++) {
      const name = segments[s];
      const text = decoder.decode(await this.files.read(name));
      let offset = 0;
      while (offset < text.length) {
        const end = text.indexOf('\n', offset);
        let record: WalRecord | undefined;
        if (end >= 0) {
          try {
            record = decodeLine(text.slice(offset, end)) as WalRecord;
          } catch {
            record = undefined;
          }
        }
        if (!record) {
          if (s !== segments.length - 1) {
            throw new RaftStorageCorruptError(`segment ${name} has a damaged record at byte ${offset} before the last segment`);
          }
          // A crash mid-append: drop the torn tail so new records follow valid ones.
          await this.files.truncate(name, encoder.encode(text.slice(0, offset)).length);
          break;
        }
        if (record.t === 'h') hardState = record.h;
        else if (record.t === 'base') {
          entries = [];
          next = record.i + 1;
        } else {
          const e = record.e;
          if (e.index > next + entries.length || e.index < next) {
            throw new RaftStorageCorruptError(`segment ${name}: entry ${e.index} does not follow the log (next ${next + entries.length})`);
          }
          entries.length = e.index - next;
          entries.push(e);
        }
        offset = end + 1;
      }
      this.segment = Number(SEGMENT.exec(name)![1]);
      this.segmentSize = encoder.encode(text.slice(0, offset)).length;
    }
    if (snapshot && next > snapshot.meta.index + 1) {
      throw new RaftStorageCorruptError(`the log starts at ${next}, after the snapshot at ${snapshot.meta.index}: entries are missing`);
    }
    if (this.segment === 0) this.segment = 1;
    return { hardState, snapshot, entries };
  }

  async persist(batch: PersistBatch): Promise<void> {
    let text = '';
    if (batch.snapshot) {
      await this.files.replace(snapshotName(batch.snapshot.meta.index), encoder.encode(encodeLine(batch.snapshot)));
      text += encodeLine({ t: 'base', i: batch.snapshot.meta.index });
    }
    for (const e of batch.entries) text += encodeLine({ t: 'e', e });
    if (batch.hardState) text += encodeLine({ t: 'h', h: batch.hardState });
    if (text.length === 0) return;
    const bytes = encoder.encode(text);
    const name = segmentName(this.segment);
    await this.files.append(name, bytes);
    await this.files.sync(name);
    this.segmentSize += bytes.length;
    if (this.segmentSize >= this.segmentBytes) {
      this.segment++;
      this.segmentSize = 0;
    }
    if (batch.snapshot) await this.removeOlderSnapshots(batch.snapshot.meta.index);
  }

  async saveSnapshot(snapshot: Snapshot, compactTo: number, retained: readonly Entry[], hardState: HardState): Promise<void> {
    await this.files.replace(snapshotName(snapshot.meta.index), encoder.encode(encodeLine(snapshot)));
    // The retained tail goes to a fresh segment; only once it is durable do older ones go.
    let text = encodeLine({ t: 'base', i: compactTo });
    for (const e of retained) text += encodeLine({ t: 'e', e });
    text += encodeLine({ t: 'h', h: hardState });
    const previous = this.segment;
    this.segment++;
    const name = segmentName(this.segment);
    const bytes = encoder.encode(text);
    // Written whole or not at all: a torn copy would keep the base record but lose entries.
    await this.files.replace(name, bytes);
    this.segmentSize = bytes.length;
    // Newest first: a crash part-way leaves the oldest segments, still a log from its start.
    for (const n of (await this.files.list()).reverse()) {
      const m = SEGMENT.exec(n);
      if (m && Number(m[1]) <= previous) await this.files.remove(n);
    }
    await this.removeOlderSnapshots(snapshot.meta.index);
  }

  private async removeOlderSnapshots(index: number): Promise<void> {
    for (const n of await this.files.list()) {
      const m = SNAPSHOT.exec(n);
      if (m && Number(m[1]) < index) await this.files.remove(n);
    }
  }

  async close(): Promise<void> {
    await this.files.close();
  }
}
