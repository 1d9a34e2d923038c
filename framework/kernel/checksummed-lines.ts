import { crc32 } from 'node:zlib';

/**
 * The record format of Baton's append-only files (the stream WAL, Raft log segments and
 * snapshot files): one record per line, `crc32-hex SPACE json NEWLINE`, the checksum over the
 * JSON's bytes.
 *
 * Reading tells two kinds of damage apart. A crash in the middle of an append leaves a prefix
 * of what was being appended, so at worst the file's last line is incomplete (no newline): a
 * **torn tail**, never acknowledged (an append resolves only once its newline is synced), cut
 * off silently. A complete line that fails its checksum, or does not parse, was damaged after
 * it was written (a bad sector, a flipped bit, a stray write): **damage**, reported with its
 * byte offset and never cut silently, because the records after it were acknowledged too.
 */

const NEWLINE = 0x0a;
const SPACE = 0x20;
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * One record as a line: what every writer of these files appends.
 *
 * @internal
 */
export function encodeChecksummedLine(value: unknown): string {
  const json = JSON.stringify(value);
  return `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

/** @internal */
export interface ScannedRecord<T> {
  value: T;
  /** Byte offset of the record's line in the file. */
  offset: number;
  /** Byte offset just past its newline. */
  end: number;
}

/**
 * The first damaged line of a file, and what follows it.
 *
 * @internal
 */
export interface LineDamage<T> {
  /** Byte offset where the damaged line starts: the records before it are intact. */
  offset: number;
  /** What is wrong with it, e.g. "its checksum does not match". */
  reason: string;
  /** Intact records after the damage, in file order (dropped if the file is cut at `offset`). */
  later: ScannedRecord<T>[];
  /** Bytes from `offset` to the end of the file that are in no intact record. */
  damagedBytes: number;
}

/** @internal */
export interface LineScan<T> {
  /** The intact records before any damage or torn tail, in file order. */
  records: ScannedRecord<T>[];
  /** Bytes from the start of the file that hold intact records: where a torn tail is cut. */
  intactBytes: number;
  /** Bytes of an incomplete last line (a crash cut its append short); 0 when there is none. */
  tornBytes: number;
  /** Set when a line that is not the torn tail is damaged. */
  damage?: LineDamage<T>;
}

/**
 * What a record must look like beyond its checksum: a record that fails it (a Raft record of an
 * unknown type, say) is damage like a bad checksum.
 *
 * @internal
 */
export type RecordCheck<T> = (value: unknown) => value is T;

/** Parses one line (without its newline), or says why it is not a record. */
function parseLine(bytes: Uint8Array, start: number, end: number): { value: unknown } | { reason: string } {
  if (end - start < 10 || bytes[start + 8] !== SPACE) return { reason: 'it is not a checksummed record' };
  const stored = ascii(bytes, start, start + 8);
  const json = bytes.subarray(start + 9, end);
  if (crc32(json).toString(16).padStart(8, '0') !== stored) return { reason: 'its checksum does not match' };
  try {
    return { value: JSON.parse(decoder.decode(json)) };
  } catch {
    return { reason: 'its checksum matches but it does not parse' };
  }
}

function isRecord<T>(parsed: { value: unknown } | { reason: string }, check: RecordCheck<T>): boolean {
  return 'value' in parsed && check(parsed.value);
}

function ascii(bytes: Uint8Array, start: number, end: number): string {
  let text = '';
  for (let i = start; i < end; i++) text += String.fromCharCode(bytes[i]);
  return text;
}

/**
 * Reads a file of checksummed lines. `check` rejects records whose shape is wrong for this
 * file (counted as damage like a bad checksum).
 *
 * @internal
 */
export function scanChecksummedLines<T>(bytes: Uint8Array, check: RecordCheck<T>, what = 'a record'): LineScan<T> {
  const records: ScannedRecord<T>[] = [];
  let position = 0;
  let damage: LineDamage<T> | undefined;
  while (position < bytes.length) {
    const newline = bytes.indexOf(NEWLINE, position);
    if (newline < 0) {
      // The last line has no newline. A crash cuts an append anywhere, so that is a torn tail;
      // unless it is a whole record followed by one byte that is no newline (nor the zero a
      // filesystem may leave after a crash): then the line's end was damaged, not torn.
      const damagedEnd = bytes[bytes.length - 1] !== 0 && isRecord(parseLine(bytes, position, bytes.length - 1), check);
      if (damage) {
        damage.damagedBytes += bytes.length - position;
      } else if (damagedEnd) {
        damage = { offset: position, reason: 'its newline is damaged', later: [], damagedBytes: bytes.length - position };
      } else {
        return { records, intactBytes: position, tornBytes: bytes.length - position };
      }
      break;
    }
    const parsed = parseLine(bytes, position, newline);
    const usable = isRecord(parsed, check);
    if (damage) {
      if (usable) damage.later.push({ value: (parsed as { value: T }).value, offset: position, end: newline + 1 });
      else damage.damagedBytes += newline + 1 - position;
    } else if (usable) {
      records.push({ value: (parsed as { value: T }).value, offset: position, end: newline + 1 });
    } else {
      const reason = 'reason' in parsed ? parsed.reason : `its checksum matches but it is not ${what}`;
      damage = { offset: position, reason, later: [], damagedBytes: newline + 1 - position };
    }
    position = newline + 1;
  }
  const intactBytes = damage ? damage.offset : position;
  return { records, intactBytes, tornBytes: 0, ...(damage ? { damage } : {}) };
}
