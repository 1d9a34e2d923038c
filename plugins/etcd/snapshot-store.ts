import { createHash } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import { z } from 'zod';
import type { Clock } from '@baton/contracts';
import { decodeClaim } from './log-entry.js';
import { prefixEnd, type LogKeys } from './log-keys.js';
import type { ReplicaSnapshot } from './replica.js';

/** The small key that names the current snapshot; its chunks live under their own keys. */
export interface SnapshotManifest {
  seq: number;
  /** Names the chunk keys: unique per writer, so two leaders snapshotting never mix chunks. */
  dir: string;
  chunks: number;
  bytes: number;
  sha256: string;
}

const manifestSchema = z.object({
  seq: z.number().int().min(0),
  dir: z.string().regex(/^[0-9a-z-]+$/),
  chunks: z.number().int().min(1),
  bytes: z.number().int().min(0),
  sha256: z.string().min(1),
});

const READ_ATTEMPTS = 5;
const CLAIM_PAGE = 1_000;
const DELETES_PER_TXN = 64;

/**
 * Snapshots of the replica in etcd, and the compaction they allow. A snapshot is written in
 * chunks (etcd refuses requests over 1.5 MiB) under keys named by its sequence number, then made
 * current by one conditional put of the manifest, so a reader sees either the old snapshot or
 * the new one, never a mix; the chunks of the replaced snapshot are deleted in that same
 * transaction.
 */
export class SnapshotStore {
  constructor(
    private readonly client: Etcd3,
    private readonly keys: LogKeys,
    private readonly chunkBytes: number,
    private readonly requestTimeoutMs: number,
    private readonly clock: Clock,
  ) {}

  /** The current manifest and its mod revision (0 when there is no snapshot yet). */
  async manifest(): Promise<{ manifest?: SnapshotManifest; modRevision: number }> {
    const response = await this.client
      .get(this.keys.snapshotManifest)
      .options(this.callOptions())
      .exec();
    const kv = response.kvs[0];
    if (!kv) return { modRevision: 0 };
    const parsed = manifestSchema.safeParse(JSON.parse(kv.value.toString('utf8')));
    if (!parsed.success) {
      throw new Error(`the snapshot manifest at ${this.keys.snapshotManifest} is malformed`);
    }
    return { manifest: parsed.data, modRevision: Number(kv.mod_revision) };
  }

  /** The current snapshot, or undefined when none was taken. */
  async read(): Promise<ReplicaSnapshot | undefined> {
    let lastProblem = '';
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const response = await this.client
        .get(this.keys.snapshotManifest)
        .options(this.callOptions())
        .exec();
      const kv = response.kvs[0];
      if (!kv) return undefined;
      const manifest = manifestSchema.parse(JSON.parse(kv.value.toString('utf8')));
      // Read the chunks at the manifest's revision: a newer snapshot replacing them meanwhile
      // does not change what this read sees.
      const chunks = await this.client
        .getAll()
        .prefix(this.keys.snapshotChunks(manifest.dir))
        .sort('Key', 'Ascend')
        .revision(response.header.revision)
        .options(this.callOptions())
        .exec()
        .catch((error: unknown) => {
          lastProblem = String(error);
          return undefined;
        });
      if (!chunks) continue;
      const bytes = Buffer.concat(chunks.kvs.map((chunk) => chunk.value));
      const digest = createHash('sha256').update(bytes).digest('hex');
      if (chunks.kvs.length !== manifest.chunks || digest !== manifest.sha256) {
        lastProblem = `snapshot ${manifest.seq} has ${chunks.kvs.length}/${manifest.chunks} chunks or a wrong digest`;
        continue;
      }
      return JSON.parse(bytes.toString('utf8')) as ReplicaSnapshot;
    }
    throw new Error(`could not read a consistent snapshot: ${lastProblem}`);
  }

  /**
   * Stores `snapshot` if the manifest is still at `expectedModRevision` (another leader may have
   * written one meanwhile). Returns whether it became the current snapshot.
   */
  async write(
    snapshot: ReplicaSnapshot,
    expected: { manifest?: SnapshotManifest; modRevision: number },
    writer: string,
  ): Promise<boolean> {
    if (expected.manifest && expected.manifest.seq >= snapshot.seq) return false;
    const dir = `${String(snapshot.seq).padStart(16, '0')}-${writer}`;
    const bytes = Buffer.from(JSON.stringify(snapshot), 'utf8');
    const count = Math.max(1, Math.ceil(bytes.length / this.chunkBytes));
    for (let i = 0; i < count; i++) {
      await this.client
        .put(this.keys.snapshotChunk(dir, i))
        .value(bytes.subarray(i * this.chunkBytes, (i + 1) * this.chunkBytes))
        .options(this.callOptions())
        .exec();
    }
    const manifest: SnapshotManifest = {
      seq: snapshot.seq,
      dir,
      chunks: count,
      bytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    };
    const ours = this.keys.snapshotChunks(dir);
    const every = this.keys.snapshotChunkPrefix;
    const txn = await this.client
      .if(this.keys.snapshotManifest, 'Mod', '==', expected.modRevision)
      .then(
        this.client.put(this.keys.snapshotManifest).value(JSON.stringify(manifest)),
        // Every other snapshot's chunks go in the same step as the swap: the replaced one's, and
        // any a writer left when it died before its swap. No later clean-up can be missed, and
        // etcd never holds chunks that no manifest names. (A writer still writing chunks is
        // racing this swap and loses it: its compare on the manifest fails.)
        this.client.delete().inRange({ start: every, end: ours }),
        this.client.delete().inRange({ start: prefixEnd(ours), end: prefixEnd(every) }),
      )
      .options(this.callOptions())
      .commit();
    if (!txn.succeeded) {
      // Another writer won: nobody will read our chunks. Should this delete fail, the next
      // successful swap removes them.
      await this.client.delete().prefix(ours).options(this.callOptions()).exec();
    }
    return txn.succeeded;
  }

  /** Deletes every log entry up to and including `seq` (a snapshot covers them). */
  async compactLog(seq: number): Promise<void> {
    if (seq < 1) return;
    await this.client
      .delete()
      .inRange({ start: this.keys.entry(0), end: this.keys.entry(seq + 1) })
      .options(this.callOptions())
      .exec();
  }

  /**
   * Deletes the idempotency claims the window no longer remembers as of snapshot `seq`, so etcd
   * holds about as many claims as the window. Each delete is conditional on the claim being
   * unchanged: a claim re-made after it expired is never removed.
   */
  async pruneClaims(seq: number, remembered: ReadonlySet<string>): Promise<number> {
    let start: string | Buffer = this.keys.idemPrefix;
    const end = prefixEnd(this.keys.idemPrefix);
    let pruned = 0;
    for (;;) {
      const page = await this.client
        .getAll()
        .inRange({ start, end })
        .sort('Key', 'Ascend')
        .limit(CLAIM_PAGE)
        .options(this.callOptions())
        .exec();
      const stale = page.kvs.filter((kv) => {
        const key = kv.key.toString('utf8').slice(this.keys.idemPrefix.length);
        const claim = decodeClaim(kv.value);
        return claim !== undefined && claim.seq <= seq && !remembered.has(key);
      });
      for (let i = 0; i < stale.length; i += DELETES_PER_TXN) {
        const group = stale.slice(i, i + DELETES_PER_TXN);
        pruned += await this.deleteUnchanged(group);
      }
      if (page.kvs.length < CLAIM_PAGE) return pruned;
      start = Buffer.concat([page.kvs[page.kvs.length - 1].key, Buffer.from([0])]);
    }
  }

  private async deleteUnchanged(
    kvs: Array<{ key: Buffer; mod_revision: string }>,
  ): Promise<number> {
    if (kvs.length === 0) return 0;
    let txn = this.client.if(kvs[0].key, 'Mod', '==', kvs[0].mod_revision);
    for (const kv of kvs.slice(1)) txn = txn.and(kv.key, 'Mod', '==', kv.mod_revision);
    const all = await txn
      .then(...kvs.map((kv) => this.client.delete().key(kv.key)))
      .options(this.callOptions())
      .commit();
    if (all.succeeded) return kvs.length;
    // One of them was re-claimed meanwhile: delete the others one by one.
    let deleted = 0;
    for (const kv of kvs) {
      const one = await this.client
        .if(kv.key, 'Mod', '==', kv.mod_revision)
        .then(this.client.delete().key(kv.key))
        .options(this.callOptions())
        .commit();
      if (one.succeeded) deleted += 1;
    }
    return deleted;
  }

  private callOptions(): { deadline: Date } {
    return { deadline: new Date(this.clock.now() + this.requestTimeoutMs) };
  }
}
