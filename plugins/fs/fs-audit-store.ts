import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  AuditConflictError,
  auditListOptions,
  checkAuditRecord,
  isBeforeCursor,
  seqOf,
  type AuditListOptions,
  type AuditRecord,
  type AuditStore,
  type BatonError,
} from '@baton/contracts';
import { durableFiles, type DurableFiles, errnoCode, type Lifecycle } from '@baton/kernel';
import {
  auditRecordSchema,
  differingFields,
  positionOfFileName,
  parsePositionFile,
  parseRecordFile,
  positionFileText,
  recordFileName,
  recordFileText,
  type RecordPosition,
} from './audit-record-file.js';
import { encodeName } from './file-name-encoding.js';
import { SerialQueue } from './serial-queue.js';
import { StoreDirectory } from './store-directory.js';

const STORE = 'fs audit store';
/** Longer identities are named by their hash; the file inside still holds the full text. */
const MAX_READABLE_NAME = 200;

export interface FsAuditStoreOptions {
  /** The store's directory (it uses `<dir>/audit/`); created on start. One process per directory. */
  dir: string;
  /** How the files are written; the real file system by default (the crash harness records it). */
  files?: DurableFiles;
}

/**
 * An AuditStore on the local file system, under `<dir>/audit/`:
 * - `records/<authority>.a/<commit_index>[-<seq>].json`: the record, one file per identity
 *   (authority, commit_index, seq), so latest and list read one directory;
 * - `ids/<id>.i`: the position of the record a transfer id names (the byId index);
 * - `tmp/`: temp files, fsynced then renamed into place, so every file is whole or absent.
 * A put writes the id's position first and the record second: a crash in between leaves a
 * position with no record, which byId reads as absent and the next put of that id replaces.
 * Puts run one at a time, since each decides from what it read. A file that cannot be read or
 * parsed raises StoreUnavailableError: the store never answers from data it cannot trust.
 */
export class FsAuditStore implements AuditStore, Lifecycle {
  readonly dir: string;
  private readonly root: string;
  private readonly recordsDir: string;
  private readonly idsDir: string;
  private readonly directory: StoreDirectory;
  private readonly puts = new SerialQueue();
  private readonly files: DurableFiles;

  constructor(options: FsAuditStoreOptions) {
    this.dir = resolve(options.dir);
    this.files = options.files ?? durableFiles;
    this.root = join(this.dir, 'audit');
    this.recordsDir = join(this.root, 'records');
    this.idsDir = join(this.root, 'ids');
    this.directory = new StoreDirectory({
      store: STORE,
      root: this.root,
      subdirs: [this.recordsDir, this.idsDir],
      check: 'exists, is a readable directory and its files are intact',
      files: this.files,
    });
  }

  /** Creates the directories and clears temp files a crash left behind. */
  async start(): Promise<void> {
    await this.open();
  }

  async put(record: AuditRecord): Promise<{ created: boolean }> {
    checkAuditRecord(record);
    const checked = auditRecordSchema.parse(record);
    return this.puts.run(async () => {
      await this.open();
      try {
        return await this.putInOrder(checked);
      } catch (error) {
        throw this.unavailable(error, `cannot store audit record ${JSON.stringify(checked.id)}`);
      }
    });
  }

  async byId(id: string): Promise<AuditRecord | undefined> {
    await this.open();
    try {
      return await this.recordById(id);
    } catch (error) {
      throw this.unavailable(
        error,
        `cannot read the audit record of transfer ${JSON.stringify(id)}`,
      );
    }
  }

  async latest(authority: string): Promise<AuditRecord | undefined> {
    return (await this.history(authority, 1))[0];
  }

  async list(authority: string, options?: AuditListOptions): Promise<AuditRecord[]> {
    const cursor = auditListOptions(options, STORE);
    return this.history(authority, cursor.limit, cursor);
  }

  private async putInOrder(record: AuditRecord): Promise<{ created: boolean }> {
    const stored = await this.recordAt(record);
    if (stored) {
      const differences = differingFields(stored, record);
      if (differences.length > 0) {
        throw new AuditConflictError(
          record,
          `the stored record differs in ${differences.join(', ')}`,
        );
      }
      return { created: false };
    }
    const holder = await this.recordById(record.id);
    if (holder) {
      throw new AuditConflictError(
        record,
        `transfer id ${record.id} already records ${holder.authority} @ ${holder.commit_index}`,
      );
    }
    await this.writeFile(
      this.idsDir,
      this.idFileName(record.id),
      positionFileText(record.id, record),
    );
    const authorityDir = this.authorityDir(record.authority);
    await this.files.createDirectory(authorityDir);
    await this.writeFile(authorityDir, recordFileName(record.commit_index, seqOf(record)), recordFileText(record));
    return { created: true };
  }

  /** The newest `limit` records of a trail below the cursor's position, newest first. */
  private async history(
    authority: string,
    limit: number,
    cursor = { before: Number.MAX_SAFE_INTEGER, beforeSeq: 0 },
  ): Promise<AuditRecord[]> {
    await this.open();
    try {
      let names: string[];
      try {
        names = await readdir(this.authorityDir(authority));
      } catch (error) {
        if (errnoCode(error) !== 'ENOENT') throw error;
        await this.checkRoot();
        return [];
      }
      const positions = names
        .flatMap((name) => positionOfFileName(name) ?? [])
        .filter((position) => isBeforeCursor(position as AuditRecord, cursor));
      positions.sort((a, b) => b.commit_index - a.commit_index || b.seq - a.seq);
      const records: AuditRecord[] = [];
      for (const { commit_index, seq } of positions.slice(0, limit)) {
        const record = await this.recordAt({ authority, commit_index, seq });
        if (!record)
          throw new Error(`the record of ${authority} @ ${commit_index}.${seq} vanished while being read`);
        records.push(record);
      }
      return records;
    } catch (error) {
      throw this.unavailable(
        error,
        `cannot read the audit records of ${JSON.stringify(authority)}`,
      );
    }
  }

  private async recordById(id: string): Promise<AuditRecord | undefined> {
    const text = await this.readText(join(this.idsDir, this.idFileName(id)));
    if (text === undefined) return undefined;
    const position = parseOrThrow(
      () => parsePositionFile(text),
      `the id index file of ${JSON.stringify(id)}`,
    );
    if (position.id !== id)
      throw new Error(
        `the id index file of ${JSON.stringify(id)} names ${JSON.stringify(position.id)}`,
      );
    const record = await this.recordAt(position);
    // A position without its record (a put that crashed between its two writes), or one whose
    // record belongs to another transfer: this id has no record.
    return record?.id === id ? record : undefined;
  }

  /** The record at an identity, checked to be the one its file name promises. */
  private async recordAt(position: RecordPosition): Promise<AuditRecord | undefined> {
    const path = join(this.authorityDir(position.authority), recordFileName(position.commit_index, position.seq ?? 0));
    const text = await this.readText(path);
    if (text === undefined) return undefined;
    const record = parseOrThrow(() => parseRecordFile(text), `audit record file ${path}`);
    if (record.authority !== position.authority || record.commit_index !== position.commit_index || seqOf(record) !== (position.seq ?? 0)) {
      throw new Error(
        `audit record file ${path} holds ${record.authority} @ ${record.commit_index}`,
      );
    }
    return record;
  }

  /** A file's text, or undefined when it does not exist (and the store's directory does). */
  private async readText(path: string): Promise<string | undefined> {
    try {
      return await readFile(path, 'utf8');
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error;
      await this.checkRoot();
      return undefined;
    }
  }

  /** Replaces `dir/name` with `text` atomically and durably. */
  private async writeFile(dir: string, name: string, text: string): Promise<void> {
    const temp = await this.directory.temps.write(Buffer.from(text, 'utf8'));
    try {
      await this.files.rename(temp, join(dir, name));
    } catch (error) {
      await this.files.discard(temp).catch(() => undefined);
      throw error;
    }
  }

  /** "Missing" is an answer only while the store's directories are there to give it. */
  private async checkRoot(): Promise<void> {
    for (const dir of [this.recordsDir, this.idsDir]) {
      if (!(await stat(dir)).isDirectory()) throw new Error(`${dir} is not a directory`);
    }
  }

  private authorityDir(authority: string): string {
    return join(this.recordsDir, identityFileName(authority, 'a'));
  }

  private idFileName(id: string): string {
    return identityFileName(id, 'i');
  }

  private open(): Promise<void> {
    return this.directory.open();
  }

  private unavailable(error: unknown, what: string): BatonError {
    return this.directory.unavailable(error, what);
  }
}

/**
 * A portable file name for an identity: its escaped text (readable on disk), or for very long
 * identities a hash. The two shapes have different suffixes, so they never collide.
 */
function identityFileName(identity: string, kind: string): string {
  const readable = encodeName(identity);
  if (readable.length <= MAX_READABLE_NAME) return `${readable}.${kind}`;
  return `${createHash('sha256').update(identity, 'utf8').digest('hex')}.h${kind}`;
}

function parseOrThrow<T>(parse: () => T, what: string): T {
  try {
    return parse();
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(`${what} is corrupt: ${detail.slice(0, 300)}`, { cause: error });
  }
}
