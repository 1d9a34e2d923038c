import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { crc32 } from 'node:zlib';
import type { Entry, HardState, Snapshot } from '../core/types.js';
import { type ByteFiles, repairCommand } from '@baton/kernel';
import { readRaftLog, readSnapshotInForce, SEGMENT, SNAPSHOT, type LogProblem } from './log-reader.js';
import { RaftStorageCorruptError, type PersistBatch, type RaftStorage, type RecoveredState } from './raft-storage.js';
import { piecesOf } from './snapshot-image.js';

/** A snapshot file is written in appends of at most about this many bytes (64 KiB: about one piece), each one awaited. */
const SNAPSHOT_APPEND_BYTES = 64 * 1024;
/**
 * ...and an append goes as soon as encoding has held the event loop this long (ms), whatever it
 * holds: pieces differ in how long they take to read out and encode (a run of a thousand small
 * records against a thousand large ones), so a bound in bytes alone lets some turns run long.
 */
const SNAPSHOT_TURN_MS = 2;
const encoder = new TextEncoder();

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

export interface FileRaftStorageOptions {
  /** Start a new segment once the current one exceeds this many bytes. */
  segmentBytes?: number;
  /** The directory the files are in, for messages and the repair command (default: the ByteFiles' `dir`). */
  dir?: string;
  /** Told of damage found at start, before the start fails with it (the corruption metric). */
  onCorruption?: (error: RaftStorageCorruptError) => void;
}

/**
 * Raft storage as append-only log segments plus snapshot files. Each `persist` is one append
 * of checksummed records (entries, then hard state) and one fsync, so a Ready costs one sync
 * however many entries it carries. Recovery replays the segments in order; a torn record at
 * the end of the last segment (a crash mid-append) is cut off; anything else that fails its
 * checksum, or does not follow the log, is damage: the start fails with a RaftStorageCorruptError
 * naming the file and byte, and `baton repair raft` is what cuts it (log-repair.ts). A snapshot file holds one checksummed line per
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
  private readonly dir: string | undefined;

  constructor(
    private readonly files: ByteFiles,
    private readonly options: FileRaftStorageOptions = {},
  ) {
    this.segmentBytes = options.segmentBytes ?? 64 * 1024 * 1024;
    const dir = options.dir ?? (files as { dir?: unknown }).dir;
    this.dir = typeof dir === 'string' ? dir : undefined;
  }

  async load(): Promise<RecoveredState> {
    const names = await this.files.list();
    const log = await readRaftLog(this.files, names);
    if (log.problem) this.refuse(log.problem);
    const last = log.segments.at(-1);
    // A crash mid-append: drop the torn tail so new records follow valid ones.
    if (last && last.tornBytes > 0) await this.files.truncate(last.name, last.intactBytes);
    if (last) {
      this.segment = Number(SEGMENT.exec(last.name)![1]);
      this.segmentSize = last.intactBytes;
    }
    const { snapshot, problem } = await readSnapshotInForce(this.files, names, log.named);
    if (problem) this.refuse(problem);
    if (snapshot) this.written.add(snapshot.meta.index);
    if (snapshot && log.base > snapshot.meta.index) {
      this.refuse({ store: 'raft-log', file: last?.name ?? 'the log', reason: `the log starts at ${log.base + 1}, after the snapshot at ${snapshot.meta.index}: entries are missing` });
    }
    if (this.segment === 0) this.segment = 1;
    return { hardState: log.hardState, snapshot, entries: log.entries };
  }

  /** Fails the start on damage: counted, then thrown with the file, the byte and the repair command. */
  private refuse(problem: LogProblem): never {
    const error = new RaftStorageCorruptError({ ...problem, file: this.dir ? join(this.dir, problem.file) : problem.file, repair: repairAdvice(this.dir, problem) });
    this.options.onCorruption?.(error);
    throw error;
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

/** What the operator does about damage: the repair command, and what it implies for this member. */
function repairAdvice(dir: string | undefined, problem: LogProblem): string {
  const command = dir === undefined ? 'baton repair raft <the member\'s raft directory>' : repairCommand('raft', dir);
  const kept =
    problem.store === 'raft-snapshot'
      ? 'only the hard state (the log needs the snapshot it starts from)'
      : `the log before byte ${problem.offset ?? 0} of ${problem.file} and the hard state`;
  return (
    `The member does not start on it. Stop it and run "${command}": it moves the damaged files aside (kept), keeps ${kept}, ` +
    'and the member then catches up from the other voters, voting only once it has (a lone voter loses what was dropped)'
  );
}
