import type { DurableStore } from '@baton/contracts';
import { type ByteFiles, scanChecksummedLines, type ScannedRecord } from '@baton/kernel';
import type { Entry, HardState, Snapshot } from '../core/types.js';
import { imageOfPieces } from './snapshot-image.js';

/**
 * One log record. `base` restarts the log after index `i` (a snapshot or a compaction) and
 * names the snapshot in force (`s`): a snapshot file the log does not name is not used (one
 * written, then the member crashed before putting it in force).
 */
export type LogRecord = { t: 'e'; e: Entry } | { t: 'h'; h: HardState } | { t: 'base'; i: number; s?: number };

/** One line of a snapshot file: its meta first, then each piece, then how many there were. */
export type SnapshotRecord = { t: 'meta'; meta: Snapshot['meta'] } | { t: 'p'; p: unknown } | { t: 'end'; n: number };

export const SEGMENT = /^wal-(\d{12})\.log$/;
/** Snapshot files: pieces as lines (`.snap`), or one line holding it whole (`.json`, earlier versions). */
export const SNAPSHOT = /^snap-(\d{16})\.(snap|json)$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function isLogRecord(value: unknown): value is LogRecord {
  if (!isObject(value)) return false;
  if (value.t === 'e') return isObject(value.e) && isIndex(value.e.index) && isIndex(value.e.term);
  if (value.t === 'h') return isObject(value.h) && isIndex(value.h.term) && isIndex(value.h.commit) && typeof value.h.vote === 'string';
  if (value.t === 'base') return isIndex(value.i) && (value.s === undefined || isIndex(value.s));
  return false;
}

function isSnapshotRecord(value: unknown): value is SnapshotRecord {
  if (!isObject(value)) return false;
  if (value.t === 'meta') return isObject(value.meta) && isIndex(value.meta.index) && Array.isArray(value.meta.voters);
  if (value.t === 'end') return isIndex(value.n);
  return value.t === 'p' && 'p' in value;
}

/** The first thing wrong with a member's files that is not a torn tail. */
export interface LogProblem {
  store: DurableStore;
  /** The file's name in the member's directory. */
  file: string;
  /** Where in it the damage starts; absent when a whole file is missing. */
  offset?: number;
  reason: string;
}

export interface SegmentReading {
  name: string;
  /** Bytes holding intact records up to the first damage or torn tail (all of them when neither). */
  intactBytes: number;
  /** Bytes of an incomplete last record (a crash mid-append); only ever cut in the last segment. */
  tornBytes: number;
  size: number;
}

/** What a member's log says, read up to its first problem. */
export interface LogReading {
  hardState: HardState;
  /** Entries after the last base, contiguous. */
  entries: Entry[];
  /** The index the log restarts after (its last base record), 0 without one. */
  base: number;
  /** The snapshot the last base record names; undefined when none did (earlier versions). */
  named?: number;
  /** The segments replayed, in order, up to and including the one with the problem. */
  segments: SegmentReading[];
  /** The segments after the problem, never replayed. */
  laterSegments: string[];
  problem?: LogProblem & {
    /** Intact records after the damage (in the damaged segment and every later one). */
    later: LogRecord[];
    /** Bytes after the damage that are in no intact record. */
    damagedBytes: number;
  };
}

function describe(later: number): string {
  return later === 0 ? 'nothing intact follows it' : `${later} intact ${later === 1 ? 'record follows' : 'records follow'} it`;
}

/**
 * Replays the segments in order, as a member does at start. Replay stops at the first damaged
 * record, an incomplete record anywhere but at the end of the last segment, or an entry that
 * does not follow the log: `problem` says which, and what intact records come after it.
 */
export async function readRaftLog(files: ByteFiles, names?: string[]): Promise<LogReading> {
  names ??= await files.list();
  const segments = names.filter((n) => SEGMENT.test(n)).sort();
  const reading: LogReading = { hardState: { term: 0, vote: '', commit: 0 }, entries: [], base: 0, segments: [], laterSegments: [] };
  let next = 1;
  for (let s = 0; s < segments.length; s++) {
    const name = segments[s];
    const bytes = (await files.read(name)) ?? new Uint8Array(0);
    const scan = scanChecksummedLines(bytes, isLogRecord, 'a Raft log record');
    const segment: SegmentReading = { name, intactBytes: scan.intactBytes, tornBytes: scan.tornBytes, size: bytes.length };
    reading.segments.push(segment);
    let problem: LogProblem | undefined;
    let later: ScannedRecord<LogRecord>[] = [];
    for (let r = 0; r < scan.records.length && !problem; r++) {
      const record = scan.records[r].value;
      if (record.t === 'h') reading.hardState = record.h;
      else if (record.t === 'base') {
        reading.entries = [];
        next = record.i + 1;
        reading.base = record.i;
        reading.named = record.s;
      } else {
        const e = record.e;
        if (e.index > next + reading.entries.length || e.index < next) {
          const offset = scan.records[r].offset;
          problem = { store: 'raft-log', file: name, offset, reason: `entry ${e.index} does not follow the log (next ${next + reading.entries.length})` };
          segment.intactBytes = offset;
          later = scan.records.slice(r);
        } else {
          reading.entries.length = e.index - next;
          reading.entries.push(e);
        }
      }
    }
    if (!problem && scan.damage) {
      problem = { store: 'raft-log', file: name, offset: scan.damage.offset, reason: scan.damage.reason };
    } else if (!problem && scan.tornBytes > 0 && s < segments.length - 1) {
      problem = {
        store: 'raft-log',
        file: name,
        offset: scan.intactBytes,
        reason: 'its last record is incomplete, yet later segments follow (only the newest segment can tear)',
      };
    }
    if (!problem) continue;
    const laterRecords = [...later, ...(scan.damage?.later ?? [])].map((r) => r.value);
    let damagedBytes = scan.tornBytes + (scan.damage?.damagedBytes ?? 0);
    for (const other of segments.slice(s + 1)) {
      const rest = scanChecksummedLines((await files.read(other)) ?? new Uint8Array(0), isLogRecord);
      laterRecords.push(...rest.records.map((r) => r.value), ...(rest.damage?.later.map((r) => r.value) ?? []));
      damagedBytes += rest.tornBytes + (rest.damage?.damagedBytes ?? 0);
    }
    reading.laterSegments = segments.slice(s + 1);
    reading.problem = { ...problem, reason: `${problem.reason}; ${describe(laterRecords.length)}`, later: laterRecords, damagedBytes };
    return reading;
  }
  return reading;
}

export type SnapshotReading = { snapshot?: Snapshot; name?: string; problem?: LogProblem };

/**
 * The snapshot the log names, or (logs of earlier versions, whose base records named none)
 * the newest snapshot file of those versions (`.json`) that is whole: a newer one cut short was
 * being written when the member stopped, and was never in force. A `.snap` file is in force only
 * when the log names it: one written before the log's first base record (the first snapshot,
 * then a crash) was never put in force.
 */
export async function readSnapshotInForce(files: ByteFiles, names: string[], named: number | undefined): Promise<SnapshotReading> {
  const snapshots = names
    .map((n) => ({ name: n, m: SNAPSHOT.exec(n) }))
    .filter((f) => f.m !== null)
    .map((f) => ({ name: f.name, index: Number(f.m![1]), whole: f.m![2] === 'json' }))
    .sort((a, b) => b.index - a.index);
  if (named !== undefined) {
    const file = snapshots.find((f) => f.index === named);
    if (!file) {
      return { problem: { store: 'raft-snapshot', file: `snap-${String(named).padStart(16, '0')}.snap`, reason: `the log names snapshot ${named}, which is missing` } };
    }
    const read = await readSnapshotFile(files, file.name, file.whole);
    return 'snapshot' in read ? { name: file.name, snapshot: read.snapshot } : { name: file.name, problem: read.problem };
  }
  for (const file of snapshots.filter((f) => f.whole)) {
    const read = await readSnapshotFile(files, file.name, file.whole);
    if ('snapshot' in read) return { name: file.name, snapshot: read.snapshot };
    if (!read.incomplete) return { name: file.name, problem: read.problem };
  }
  return {};
}

type SnapshotFileReading = { snapshot: Snapshot } | { problem: LogProblem; incomplete: boolean };

async function readSnapshotFile(files: ByteFiles, name: string, whole: boolean): Promise<SnapshotFileReading> {
  const bytes = (await files.read(name)) ?? new Uint8Array(0);
  const problem = (offset: number, reason: string, incomplete = false): SnapshotFileReading => ({
    problem: { store: 'raft-snapshot', file: name, offset, reason },
    incomplete,
  });
  if (whole) {
    const scan = scanChecksummedLines(bytes, (v): v is Snapshot => isObject(v) && isObject(v.meta), 'a snapshot');
    if (scan.damage) return problem(scan.damage.offset, scan.damage.reason);
    if (scan.records.length !== 1) return problem(scan.intactBytes, 'it is not one whole snapshot record', scan.records.length === 0);
    return { snapshot: scan.records[0].value };
  }
  const scan = scanChecksummedLines(bytes, isSnapshotRecord, 'a snapshot record');
  if (scan.damage) return problem(scan.damage.offset, `${scan.damage.reason}; ${describe(scan.damage.later.length)}`);
  let meta: Snapshot['meta'] | undefined;
  const pieces: unknown[] = [];
  for (const { value: record, offset } of scan.records) {
    if (record.t === 'meta') {
      if (meta) return problem(offset, 'it has a second meta record');
      meta = record.meta;
    } else if (!meta) {
      return problem(offset, 'it does not begin with its meta record');
    } else if (record.t === 'p') {
      pieces.push(record.p);
    } else {
      if (record.n !== pieces.length) return problem(offset, `its end record counts ${record.n} pieces, and ${pieces.length} came before it`);
      if (scan.records.at(-1)!.offset !== offset || scan.tornBytes > 0) return problem(offset, 'more follows its end record');
      return { snapshot: { meta, data: imageOfPieces(pieces) } };
    }
  }
  return problem(scan.intactBytes, 'it ends before its last piece', true);
}
