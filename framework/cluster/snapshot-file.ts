import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ConsensusSnapshot } from '@baton/contracts';

/** The first line of a metadata backup. */
export const BACKUP_FORMAT = 'baton-metadata-backup/1';

export const backupHeaderSchema = z
  .object({
    format: z.literal(BACKUP_FORMAT),
    /** The variant whose state machine the pieces hold. */
    variant: z.enum(['stream-transfer', 'authority-transfer']),
    /** The consensus's own snapshot format of the pieces. */
    consensus: z.string().min(1),
    index: z.number().int().nonnegative(),
    term: z.number().int().nonnegative(),
    voters: z.array(z.string().min(1)).min(1),
    pieces: z.number().int().nonnegative(),
    /** sha256 (hex) of every byte after the header line. */
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    /** The member that took it. */
    takenBy: z.string().min(1),
  })
  .strict();
export type BackupHeader = z.infer<typeof backupHeaderSchema>;
export type BackupVariant = BackupHeader['variant'];

/**
 * A backup as NDJSON: a header line (index, term, voters, variant, checksum), then one line per
 * snapshot piece in the consensus's own format, so a restore hands the pieces to the consensus
 * storage as they were taken. The checksum covers every byte after the header.
 */
export function encodeBackup(snapshot: ConsensusSnapshot, variant: BackupVariant, takenBy: string): { header: BackupHeader; lines: string[] } {
  const lines = snapshot.pieces.map((piece) => `${JSON.stringify(piece)}\n`);
  const hash = createHash('sha256');
  for (const line of lines) hash.update(line);
  const header: BackupHeader = {
    format: BACKUP_FORMAT,
    variant,
    consensus: snapshot.format,
    index: snapshot.index,
    term: snapshot.term,
    voters: [...snapshot.voters],
    pieces: lines.length,
    sha256: hash.digest('hex'),
    takenBy,
  };
  return { header, lines: [`${JSON.stringify(header)}\n`, ...lines] };
}

/** A backup that is not whole or not what it says it is. */
export class BackupInvalidError extends Error {}

/** Reads a backup's bytes back: checks the header, the checksum and the piece count. */
export function decodeBackup(bytes: Buffer): { header: BackupHeader; snapshot: ConsensusSnapshot } {
  const newline = bytes.indexOf(0x0a);
  if (newline < 0) throw new BackupInvalidError('the file has no header line: it is not a Baton metadata backup');
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.subarray(0, newline).toString('utf8'));
  } catch {
    throw new BackupInvalidError('the header line is not JSON: the file is not a Baton metadata backup');
  }
  const parsed = backupHeaderSchema.safeParse(raw);
  if (!parsed.success)
    throw new BackupInvalidError(`the header is not a ${BACKUP_FORMAT} header: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'header'}: ${i.message}`).join('; ')}`);
  const header = parsed.data;
  const body = bytes.subarray(newline + 1);
  const sha256 = createHash('sha256').update(body).digest('hex');
  if (sha256 !== header.sha256)
    throw new BackupInvalidError(`checksum mismatch: the header says sha256 ${header.sha256}, the content hashes to ${sha256} (the file is damaged or truncated)`);
  const text = body.toString('utf8');
  const lines = text.length === 0 ? [] : text.replace(/\n$/, '').split('\n');
  if (lines.length !== header.pieces)
    throw new BackupInvalidError(`the header announces ${header.pieces} pieces, the file holds ${lines.length}`);
  const pieces = lines.map((line) => JSON.parse(line) as unknown);
  return {
    header,
    snapshot: { format: header.consensus, index: header.index, term: header.term, voters: header.voters, pieces },
  };
}
