import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from '@baton/contracts';
import {
  durableFiles,
  type DurableFiles,
  errnoCode,
  asideDirectory,
  setAside,
} from '@baton/kernel';
import { decodeEntries } from './wal-codec.js';
import type { WalEntry } from './wal.js';

/** The WAL's file in its directory (file-wal.ts). */
export const WAL_FILE = 'streams.wal';

/** What `baton repair wal` found and did. */
export interface WalRepairReport {
  file: string;
  /** `intact`: nothing to repair (a torn tail is cut by the node itself); `repaired`; `would-repair` on a dry run. */
  outcome: 'intact' | 'repaired' | 'would-repair';
  /** Entries kept, and the bytes holding them. */
  kept: { entries: number; bytes: number };
  /** Bytes of an incomplete last entry (a crash mid-append), which the node cuts when it opens the WAL. */
  tornBytes: number;
  damage?: {
    offset: number;
    reason: string;
    /** Bytes cut from the file: the damaged lines and the intact entries after them. */
    droppedBytes: number;
    /** The intact entries after the damage, dropped because the WAL is kept as a prefix. */
    dropped: { offset: number; entry: WalEntry }[];
  };
  /** Where the damaged file was kept (a second name for it, never deleted). */
  keptAs?: string;
}

/** Repair cannot run on this directory: no WAL there, or a file in the way. */
export class WalRepairError extends BatonError {
  constructor(message: string) {
    super('wal_repair_refused', message);
  }
}

/**
 * Repairs the stream WAL in `dir` after a damaged entry made the node refuse it: the damaged
 * file is kept under `<dir>/damaged-<n>/streams.wal` (a hard link to it, or a copy), then the
 * WAL is replaced, atomically, by its entries before the damage. Entries after the damage are
 * dropped with it, since the WAL is a log: a later entry may depend on the lost one (a flush
 * mark on records it no longer has). The node must be stopped (the caller checks its lock).
 * Without damage it changes nothing.
 */
export async function repairWal(dir: string, options: { dryRun?: boolean; files?: DurableFiles } = {}): Promise<WalRepairReport> {
  const files = options.files ?? durableFiles;
  const file = join(dir, WAL_FILE);
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') throw new WalRepairError(`there is no stream WAL in ${dir} (no ${WAL_FILE}): give the node's WAL directory (node.wal.dir in its config)`);
    throw error;
  }
  const decoded = decodeEntries(bytes);
  const report: WalRepairReport = {
    file,
    outcome: 'intact',
    kept: { entries: decoded.entries.length, bytes: decoded.validBytes },
    tornBytes: decoded.tornBytes,
  };
  if (!decoded.damage) return report;
  const damage = decoded.damage;
  report.damage = {
    offset: damage.offset,
    reason: damage.reason,
    droppedBytes: bytes.length - damage.offset,
    dropped: damage.later.map((r) => ({ offset: r.offset, entry: r.value })),
  };
  const aside = await asideDirectory(dir);
  report.keptAs = join(aside, WAL_FILE);
  if (options.dryRun) return { ...report, outcome: 'would-repair' };
  await setAside(files, dir, [WAL_FILE], aside);
  // The kept entries, whole lines as they were: the file is old or new after a crash, never a mix.
  await files.replace(file, bytes.subarray(0, damage.offset));
  return { ...report, outcome: 'repaired' };
}
