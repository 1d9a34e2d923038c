import { performance } from 'node:perf_hooks';
import { crc32 } from 'node:zlib';
import type { Entry, HardState, Snapshot } from '../core/types.js';
import type { ByteFiles } from '../../../framework/kernel/byte-files.js';
import { RaftStorageCorruptError, type PersistBatch, type RaftStorage, type RecoveredState } from './raft-storage.js';
import { imageOfPieces, piecesOf } from './snapshot-image.js';

/**
 * One log record. `base` restarts the log after index `i` (a snapshot or a compaction) and
 * names the snapshot in force (`s`): a snapshot file the log does not name is not used (one
 * written, then the member crashed before putting it in force).
 */
type WalRecord = { t: 'e'; e: Entry } | { t: 'h'; h: HardState } | { t: 'base'; i: number; s?: number };

/** One line of a snapshot file: its meta first, then each piece, then how many there were. */
type SnapshotRecord = { t: 'meta'; meta: Snapshot['meta'] } | { t: 'p'; p: unknown } | { t: 'end'; n: number };

const SEGMENT = /^wal-(\d{12})\.log$/;
/** Snapshot files: pieces as lines (`.snap`), or one line holding it whole (`.json`, earlier versions). */
const SNAPSHOT = /^snap-(\d{16})\.(snap|json)$/;
/** A snapshot file is written in appends of at most about this many bytes (64 KiB: about one piece), each one awaited. */
const SNAPSHOT_APPEND_BYTES = 64 * 1024;
/**
 * ...and an append goes as soon as encoding has held the event loop this long (ms), whatever it
 * holds: pieces differ in how long they take to read out and encode (a run of a thousand small
 * records against a thousand large ones), so a bound in bytes alone lets some turns run long.
 */
const SNAPSHOT_TURN_MS = 2;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function segmentName(seq: number): string {
  return `wal-${String(seq).padStart(12, '0')}.log`;
}

function snapshotName(index: number): string {
  return `snap-${String(index).padStart(16, '0')}.snap`;
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
 * checksum is corruption and refuses to start. A snapshot file holds one checksummed line per
 * piece between a meta line and an end line; it is written and synced before the log record
 * that names it (`base` with `s`), so a file the log does not name is ignored; compaction
 * writes a fresh segment holding the retained entries, then deletes the older segments and
 * snapshots.
 */
export class FileRaftStorage implements RaftStorage {
  private segment = 0;
  private segmentSize = 0;
  /** Snapshot files complete on disk (by index), in force or about to be. */
  private readonly written = new Set<number>();
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
    let hardState: HardState = { term: 0, vote: '', commit: 0 };
    let entries: Entry[] = [];
    let next = 1;
    /** The snapshot the log names; undefined when no base record named one (earlier versions). */
    let named: number | undefined;
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
          named = record.s;
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
    const snapshot = await this.readSnapshotInForce(names, named);
    if (snapshot) this.written.add(snapshot.meta.index);
    if (snapshot && next > snapshot.meta.index + 1) {
      throw new RaftStorageCorruptError(`the log starts at ${next}, after the snapshot at ${snapshot.meta.index}: entries are missing`);
    }
    if (this.segment === 0) this.segment = 1;
    return { hardState, snapshot, entries };
  }

  /** The snapshot the log names, or (logs of earlier versions) the newest snapshot file. */
  private async readSnapshotInForce(names: string[], named: number | undefined): Promise<Snapshot | undefined> {
    const files = names
      .map((n) => ({ name: n, m: SNAPSHOT.exec(n) }))
      .filter((f) => f.m !== null)
      .map((f) => ({ name: f.name, index: Number(f.m![1]), whole: f.m![2] === 'json' }))
      .sort((a, b) => a.index - b.index);
    if (named !== undefined) {
      const file = files.find((f) => f.index === named);
      if (!file) throw new RaftStorageCorruptError(`the log names snapshot ${named}, which is missing`);
      return this.readSnapshot(file.name, file.whole);
    }
    if (files.length === 0) return undefined;
    const newest = files[files.length - 1];
    return this.readSnapshot(newest.name, newest.whole);
  }

  private async readSnapshot(name: string, whole: boolean): Promise<Snapshot> {
    const text = decoder.decode(await this.files.read(name));
    try {
      if (whole) return decodeLine(text.replace(/\n$/, '')) as Snapshot;
      let meta: Snapshot['meta'] | undefined;
      const pieces: unknown[] = [];
      let offset = 0;
      while (offset < text.length) {
        const end = text.indexOf('\n', offset);
        if (end < 0) break;
        const record = decodeLine(text.slice(offset, end)) as SnapshotRecord;
        offset = end + 1;
        if (record.t === 'meta') meta = record.meta;
        else if (record.t === 'p') pieces.push(record.p);
        else if (record.t === 'end') {
          if (!meta || record.n !== pieces.length) break;
          return { meta, data: imageOfPieces(pieces) };
        }
      }
      throw new Error('it ends before its last piece');
    } catch (error) {
      throw new RaftStorageCorruptError(`snapshot ${name} is unreadable: ${(error as Error).message}`);
    }
  }

  /**
   * Writes the snapshot's pieces as checksummed lines, in appends of about 64 KiB, each
   * awaited: a large state is written without holding the event loop for long, and the log
   * goes on being written meanwhile (only `compact` or `persist` puts the file in force).
   */
  async writeSnapshot(snapshot: Snapshot): Promise<void> {
    const name = snapshotName(snapshot.meta.index);
    if (this.written.has(snapshot.meta.index)) return;
    // Left by a write a crash cut short: start it again.
    if ((await this.files.list()).includes(name)) await this.files.remove(name);
    let text = encodeLine({ t: 'meta', meta: snapshot.meta });
    let count = 0;
    // clock-ok: the time only decides when the event loop gets a turn; the file's bytes never depend on it.
    let turnStarted = performance.now();
    for (const p of piecesOf(snapshot.data)) {
      text += encodeLine({ t: 'p', p });
      count++;
      // clock-ok: as above.
      if (text.length >= SNAPSHOT_APPEND_BYTES || performance.now() - turnStarted >= SNAPSHOT_TURN_MS) {
        await this.files.append(name, encoder.encode(text));
        text = '';
        turnStarted = performance.now(); // clock-ok: as above.
      }
    }
    text += encodeLine({ t: 'end', n: count });
    await this.files.append(name, encoder.encode(text));
    await this.files.sync(name);
    this.written.add(snapshot.meta.index);
  }

  async persist(batch: PersistBatch): Promise<void> {
    let text = '';
    if (batch.snapshot) {
      await this.writeSnapshot(batch.snapshot);
      text += encodeLine({ t: 'base', i: batch.snapshot.meta.index, s: batch.snapshot.meta.index });
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

  async compact(snapshot: Snapshot, compactTo: number, retained: readonly Entry[], hardState: HardState): Promise<void> {
    await this.writeSnapshot(snapshot);
    // The retained tail goes to a fresh segment; only once it is durable do older ones go.
    let text = encodeLine({ t: 'base', i: compactTo, s: snapshot.meta.index });
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
      if (m && Number(m[1]) < index) {
        await this.files.remove(n);
        this.written.delete(Number(m[1]));
      }
    }
  }

  async close(): Promise<void> {
    await this.files.close();
  }
}
