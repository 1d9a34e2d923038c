import { CorruptRecordError } from '@baton/contracts';
import {
  encodeChecksummedLine,
  scanChecksummedLines,
  type LineDamage,
  repairCommand,
} from '@baton/kernel';
import type { WalEntry } from './wal.js';

/**
 * One WAL entry per line: `crc32-hex SPACE json NEWLINE` (framework/kernel/checksummed-lines.ts).
 * An incomplete last line is a torn tail left by a crash mid-append, never acknowledged, and is
 * cut; a complete line that fails its checksum is damage, which the WAL reports and refuses,
 * because every entry after it was acknowledged as well.
 */
const encoder = new TextEncoder();

const ENTRY_TYPES = new Set(['open', 'records', 'flushed', 'closed', 'settled']);

function isWalEntry(value: unknown): value is WalEntry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as { t?: unknown; stream?: unknown; epoch?: unknown };
  return ENTRY_TYPES.has(entry.t as string) && typeof entry.stream === 'string' && typeof entry.epoch === 'number';
}

export function encodeEntries(entries: readonly WalEntry[]): Uint8Array {
  let text = '';
  for (const entry of entries) text += encodeChecksummedLine(entry);
  return encoder.encode(text);
}

export interface DecodedWal {
  /** The entries before any damage or torn tail. */
  entries: WalEntry[];
  /** Bytes holding those entries: a torn tail is cut here. */
  validBytes: number;
  /** Bytes of an incomplete last line (0 when the file ends on a whole entry). */
  tornBytes: number;
  /** A damaged entry that is not a torn tail, with the intact entries after it. */
  damage?: LineDamage<WalEntry>;
}

export function decodeEntries(bytes: Uint8Array): DecodedWal {
  const scan = scanChecksummedLines(bytes, isWalEntry, 'a WAL entry');
  return {
    entries: scan.records.map((r) => r.value),
    validBytes: scan.intactBytes,
    tornBytes: scan.tornBytes,
    ...(scan.damage ? { damage: scan.damage } : {}),
  };
}

/** The error a damaged WAL opens with: where, what, and how to repair it. */
export function walCorruption(file: string, dir: string, damage: LineDamage<WalEntry>): CorruptRecordError {
  const later = damage.later.length;
  return new CorruptRecordError({
    store: 'stream-wal',
    file,
    offset: damage.offset,
    reason:
      `${damage.reason}, and ${later === 0 ? 'more bytes follow it' : `${later} intact ${later === 1 ? 'entry follows' : 'entries follow'} it`}, ` +
      'so it is no torn tail a crash leaves (only the last line can tear) and the node does not start on it',
    repair:
      `Stop the node and run "${repairCommand('wal', dir)}": it keeps the damaged file (moved aside), keeps the entries before byte ${damage.offset}, ` +
      'and lists the ones it drops (records accepted but not yet in the object store among them are lost)',
  });
}
