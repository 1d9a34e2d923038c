import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from '@baton/contracts';
import {
  DirectoryFiles,
  encodeChecksummedLine,
  durableFiles,
  type DurableFiles,
  errnoCode,
  asideDirectory,
  setAside,
} from '@baton/kernel';
import type { HardState } from '../core/types.js';
import { readRaftLog, readSnapshotInForce, SEGMENT, SNAPSHOT, type LogProblem, type LogReading, type LogRecord } from './log-reader.js';

/**
 * An upper bound on how many log entries a run of unreadable bytes can have held: no encoded
 * entry record is shorter than this (checksum, braces, index, term and type take more).
 */
const MIN_ENTRY_RECORD_BYTES = 32;
/** A repair that finds more damage once it cut at the first gives up after this many rounds. */
const MAX_ROUNDS = 4;

/** What `baton repair raft` found and did. */
export interface RaftRepairReport {
  dir: string;
  /** `intact`: nothing to repair (a torn tail is cut by the member itself); `repaired`; `would-repair` on a dry run. */
  outcome: 'intact' | 'repaired' | 'would-repair';
  /** Each problem found and what was done about it, in the order repaired. */
  repairs: {
    problem: LogProblem;
    /** The files kept aside (under `aside`) and then cut or removed. */
    setAside: string[];
    /** Cut at the problem: `file` now holds its first `bytes` bytes, then the hard state. */
    truncated?: { file: string; bytes: number };
    /** Intact entries past the problem, dropped with it: a member's log is a prefix. */
    droppedEntries: { index: number; term: number }[];
    /** Bytes past the problem that were in no intact record. */
    damagedBytes: number;
  }[];
  /** Where the damaged files were kept (never deleted). */
  aside?: string;
  /** The hard state the repaired log ends with. */
  hardState?: HardState;
  /** The last index of the log kept (the snapshot's when no entry follows it). */
  lastIndex: number;
}

/** The repair cannot run on this directory. */
export class RaftRepairError extends BatonError {
  constructor(message: string) {
    super('raft_repair_refused', message);
  }
}

/**
 * Repairs a Raft member's directory after damage made it refuse to start (file-storage.ts).
 * Damage in the log: the damaged segment and every later one are kept aside, the damaged
 * segment is cut at the last intact record before the damage and the later ones removed
 * (entries after a lost one cannot be kept: a log has no holes). Damage in the snapshot in
 * force (or a snapshot the log names missing): every segment and snapshot is kept aside and
 * removed, since the log only makes sense after its snapshot; the member starts from nothing
 * but its hard state and gets a snapshot from the leader.
 *
 * The hard state is what keeps this safe, and it is never dropped: the newest intact term and
 * vote found anywhere in the files (past the damage too) end the repaired log, so the member
 * never votes twice in a term it already voted in. And `catchUpTo` is set past every entry the
 * member may have held (the highest intact index anywhere, plus as many as the unreadable
 * bytes could have held): Raft counts this member's acknowledgement of an entry towards its
 * commit, so if it voted with a shorter log it could elect a leader that lacks a committed
 * entry. It neither votes nor campaigns until a leader has matched its log past that index
 * (RaftCore.catchingUp). What the repair cannot know is a vote recorded only in the damaged
 * bytes themselves; the member votes again only after it has caught up with a leader, by when
 * that election is settled, but where even that is too weak, remove the member from the
 * voters and add it back with an empty directory instead of repairing it.
 *
 * The member must be stopped (the caller checks its lock). Without damage nothing changes.
 */
export async function repairRaftLog(dir: string, options: { dryRun?: boolean; files?: DurableFiles } = {}): Promise<RaftRepairReport> {
  const files = options.files ?? durableFiles;
  const names = await listOrRefuse(dir);
  if (!names.some((n) => SEGMENT.test(n) || SNAPSHOT.test(n))) {
    throw new RaftRepairError(`there is no Raft log in ${dir} (no wal-*.log or snap-* file): give the member's Raft directory (its consensus dataDir)`);
  }
  const report: RaftRepairReport = { dir, outcome: 'intact', repairs: [], lastIndex: 0 };
  let aside: string | undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const reader = new DirectoryFiles(dir);
    const current = await reader.list();
    const log = await readRaftLog(reader, current);
    const snapshot = log.problem ? undefined : await readSnapshotInForce(reader, current, log.named);
    const problem = log.problem ?? snapshot?.problem;
    if (!problem) {
      report.lastIndex = log.entries.at(-1)?.index ?? snapshot?.snapshot?.meta.index ?? 0;
      report.hardState = log.hardState;
      return report;
    }
    aside ??= await asideDirectory(dir);
    report.aside = aside;
    const plan = planRepair(log, problem, current);
    report.repairs.push(plan.summary);
    report.hardState = plan.hardState;
    if (options.dryRun) {
      report.outcome = 'would-repair';
      report.lastIndex = plan.lastIndex;
      return report;
    }
    await setAside(files, dir, plan.summary.setAside, aside);
    const hardStateLine = new TextEncoder().encode(encodeChecksummedLine({ t: 'h', h: plan.hardState }));
    if (plan.summary.truncated) {
      const { file, bytes } = plan.summary.truncated;
      const kept = ((await reader.read(file)) ?? new Uint8Array(0)).subarray(0, bytes);
      // The cut segment is replaced whole (old or new after a crash): its intact prefix, then the hard state.
      await files.replace(join(dir, file), concat(kept, hardStateLine));
      for (const name of plan.summary.setAside) if (name !== file) await files.remove(join(dir, name));
    } else {
      // Nothing of the log is usable: a fresh segment holding only the hard state comes first,
      // named after every old one, so a crash part-way leaves it in force.
      await files.replace(join(dir, plan.freshSegment), hardStateLine);
      for (const name of plan.summary.setAside) await files.remove(join(dir, name));
    }
    report.outcome = 'repaired';
  }
  throw new RaftRepairError(`${dir} still has damage after ${MAX_ROUNDS} repairs; what was kept aside is under ${aside}`);
}

interface RepairPlan {
  summary: RaftRepairReport['repairs'][number];
  hardState: HardState;
  lastIndex: number;
  /** The segment written when the whole log goes. */
  freshSegment: string;
}

function planRepair(log: LogReading, problem: LogProblem, names: string[]): RepairPlan {
  const later: LogRecord[] = log.problem?.later ?? [];
  const damagedBytes = log.problem?.damagedBytes ?? 0;
  const segments = names.filter((n) => SEGMENT.test(n)).sort();
  const lastSegment = segments.at(-1);
  const freshSegment = `wal-${String((lastSegment ? Number(SEGMENT.exec(lastSegment)![1]) : 0) + 1).padStart(12, '0')}.log`;
  const keptLast = log.entries.at(-1)?.index ?? log.base;
  // The kept prefix's own commit index is safe to keep: entries up to it never change. A later
  // one may count entries the dropped records rewrote (a newer term's), which the prefix lacks.
  const keptCommit = Math.min(log.hardState.commit, keptLast);
  let hardState = log.hardState;
  let maxTerm = hardState.term;
  for (const e of log.entries) maxTerm = Math.max(maxTerm, e.term);
  let maxIndex = Math.max(keptLast, hardState.commit, hardState.catchUpTo ?? 0);
  const droppedEntries: { index: number; term: number }[] = [];
  for (const record of later) {
    if (record.t === 'h') {
      hardState = record.h;
      maxIndex = Math.max(maxIndex, record.h.commit, record.h.catchUpTo ?? 0);
    } else if (record.t === 'e') {
      droppedEntries.push({ index: record.e.index, term: record.e.term });
      maxTerm = Math.max(maxTerm, record.e.term);
      maxIndex = Math.max(maxIndex, record.e.index);
    } else {
      maxIndex = Math.max(maxIndex, record.i);
    }
    if (record.t === 'h') maxTerm = Math.max(maxTerm, record.h.term);
  }
  const wholeLog = problem.store === 'raft-snapshot';
  if (wholeLog) {
    for (const e of log.entries) droppedEntries.push({ index: e.index, term: e.term });
    maxIndex = Math.max(maxIndex, log.base);
  }
  maxIndex += Math.ceil(damagedBytes / MIN_ENTRY_RECORD_BYTES);
  // An entry of a newer term than the newest intact hard state means a term (and maybe a vote)
  // that was only in the lost records: the member is in that term, its vote there unknown.
  const vote = hardState.term === maxTerm ? hardState.vote : '';
  const repaired: HardState = { term: maxTerm, vote, commit: wholeLog ? 0 : keptCommit };
  if (maxIndex > (wholeLog ? 0 : keptLast) || droppedEntries.length > 0) repaired.catchUpTo = Math.max(maxIndex, 1);
  const summary: RepairPlan['summary'] = { problem, setAside: [], droppedEntries, damagedBytes };
  if (wholeLog) {
    summary.setAside = names.filter((n) => SEGMENT.test(n) || SNAPSHOT.test(n)).sort();
  } else {
    const damaged = log.segments.at(-1)!;
    summary.setAside = [damaged.name, ...log.laterSegments];
    summary.truncated = { file: damaged.name, bytes: damaged.intactBytes };
  }
  return { summary, hardState: repaired, lastIndex: wholeLog ? 0 : keptLast, freshSegment };
}

async function listOrRefuse(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') throw new RaftRepairError(`${dir} does not exist: give the member's Raft directory (its consensus dataDir)`);
    if (errnoCode(error) === 'ENOTDIR') throw new RaftRepairError(`${dir} is a file: give the member's Raft directory (its consensus dataDir)`);
    throw error;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
