import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { decodeBackup, BackupInvalidError, type BackupHeader, type BackupVariant } from '@baton/cluster';
import { DirectoryFiles, durableFiles } from '@baton/kernel';
import { RAFT_SNAPSHOT_FORMAT, FileRaftStorage, imageOfPieces } from '@baton/plugin-raft';
import { FailedError } from '../cli-errors.js';

/** Where a member's Raft storage lives under its data dir (both hosts' layout). */
export const RAFT_DIR = 'raft';

export interface RestoredBackup {
  header: BackupHeader;
  dataDir: string;
  raftDir: string;
  voters: string[];
}

/**
 * Seeds a fresh member's Raft storage from a backup: the snapshot (in the Raft plugin's own
 * format, as the member would have written it) in force at the backup's index and term, with
 * a hard state that commits it, so the member starts from the backup and replays nothing.
 * Refuses a damaged backup, another variant's, another consensus's, and a data dir that holds
 * anything (a member's old log must never be mixed with a backup).
 */
export async function restoreBackup(
  file: string,
  dataDir: string,
  options: { variant?: BackupVariant; voters?: string[] } = {},
): Promise<RestoredBackup> {
  const bytes = await readFile(file).catch((error: NodeJS.ErrnoException) => {
    throw new FailedError('unreadable_backup', `cannot read ${file}: ${error.code ?? error.message}`);
  });
  let decoded: ReturnType<typeof decodeBackup>;
  try {
    decoded = decodeBackup(bytes);
  } catch (error) {
    if (error instanceof BackupInvalidError) throw new FailedError('invalid_backup', `${file}: ${error.message}`);
    throw error;
  }
  const { header, snapshot } = decoded;
  if (options.variant && header.variant !== options.variant)
    throw new FailedError('wrong_variant', `${file} is a backup of the ${header.variant} variant, not of ${options.variant}`);
  if (header.consensus !== RAFT_SNAPSHOT_FORMAT)
    throw new FailedError('wrong_format', `${file} holds a ${header.consensus} snapshot; this restore seeds the Raft plugin's storage (${RAFT_SNAPSHOT_FORMAT})`);
  const root = resolve(dataDir);
  const present = await readdir(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw new FailedError('unreadable_data_dir', `cannot read ${root}: ${error.code ?? error.message}`);
  });
  if (present.length > 0)
    throw new FailedError('data_dir_not_empty', `${root} is not empty (${present.slice(0, 3).join(', ')}${present.length > 3 ? ', ...' : ''}): restore into a fresh directory, a member's old state must not mix with the backup`);
  const voters = options.voters && options.voters.length > 0 ? [...new Set(options.voters)].sort() : snapshot.voters;
  const raftDir = join(root, RAFT_DIR);
  await durableFiles.createDirectory(raftDir, { parents: true, permissions: 0o700 });
  const storage = new FileRaftStorage(new DirectoryFiles(raftDir));
  try {
    await storage.load();
    await storage.persist({
      hardState: { term: snapshot.term, vote: '', commit: snapshot.index },
      entries: [],
      snapshot: { meta: { index: snapshot.index, term: snapshot.term, voters }, data: imageOfPieces(snapshot.pieces) },
    });
  } finally {
    await storage.close();
  }
  return { header, dataDir: root, raftDir, voters };
}
