import type { Etcd3, IKeyValue, ITxnResponse } from 'etcd3';
import { decodeEntry, encodeEntry, type CommandEntry, type IdempotencyClaim, type VoterEntry } from './log-entry.js';
import type { LogKeys } from './log-keys.js';

/** One entry of a batch, with the idempotency key it claims in the same transaction. */
export interface BatchEntry {
  entry: CommandEntry | VoterEntry;
  claim?: {
    key: string;
    fingerprint: string;
    /** Replace an expired claim, if it is still at this mod revision (else: claim a free key). */
    replaceModRevision?: number;
  };
}

/** What etcd answered to a batch that did not go in: the keys its compares were about. */
export interface RefusedBatch {
  /** The log's head when etcd refused: the batch's first entry needs head + 1. */
  head: number;
  /** Who holds the batch's first sequence number, if anyone. */
  atFirst?: IKeyValue;
  /** Each entry's claim key as etcd holds it (undefined: free, or the entry claims none). */
  claims: Array<IKeyValue | undefined>;
}

/**
 * One etcd transaction appending `batch` at `seq`, `seq + 1`, ...: "if head is still seq-1 and
 * every claimed key is free (or still at the expired claim's revision), write the entries and
 * their claims and move head to the last one". All of the batch goes in, or none of it. On a
 * refusal the answer carries the head, the entry at `seq` and every claim, so the caller can tell
 * which compare failed without another request.
 */
export function appendTransaction(
  client: Etcd3,
  keys: LogKeys,
  seq: number,
  batch: BatchEntry[],
  deadline: number,
): Promise<ITxnResponse> {
  let txn = client.if(keys.head, 'Value', '==', String(seq - 1));
  const writes = [];
  const reads = [client.get(keys.head), client.get(keys.entry(seq))];
  for (const [i, { entry, claim }] of batch.entries()) {
    writes.push(client.put(keys.entry(seq + i)).value(encodeEntry(entry)));
    if (!claim) continue;
    const key = keys.idem(claim.key);
    txn = claim.replaceModRevision === undefined ? txn.and(key, 'Version', '==', 0) : txn.and(key, 'Mod', '==', claim.replaceModRevision);
    const value: IdempotencyClaim = { seq: seq + i, id: entry.id, fingerprint: claim.fingerprint };
    writes.push(client.put(key).value(JSON.stringify(value)));
    reads.push(client.get(key));
  }
  writes.push(client.put(keys.head).value(String(seq + batch.length - 1)));
  return txn
    .then(...writes)
    .else(...reads)
    .options({ deadline: new Date(deadline) })
    .commit();
}

/** Reads a refusal's answer back into the keys it is about (see appendTransaction's else branch). */
export function refusalOf(response: ITxnResponse, batch: BatchEntry[]): RefusedBatch {
  const kvs = response.responses.map((op) => op.response_range.kvs[0] as IKeyValue | undefined);
  const [headKv, atFirst] = kvs;
  let next = 2;
  const claims = batch.map((b) => (b.claim ? kvs[next++] : undefined));
  return { head: headKv ? Number(headKv.value.toString('utf8')) : 0, atFirst, claims };
}

/** The proposal id of the entry a log key holds (bootstrap entries have none). */
export function proposalIdOf(kv: IKeyValue): string | undefined {
  const entry = decodeEntry(kv.value);
  return 'id' in entry ? entry.id : undefined;
}

/**
 * The entries from `seq` on, in order, as long as each is one of `ids`: where a batch whose
 * answer was lost went in (its entries are consecutive, and it went in whole or not at all).
 */
export async function ownRun(
  client: Etcd3,
  keys: LogKeys,
  seq: number,
  ids: ReadonlySet<string>,
  deadline: number,
): Promise<{ ids: string[]; revision: number }> {
  const page = await client
    .getAll()
    .inRange({ start: keys.entry(seq), end: keys.logEnd })
    .sort('Key', 'Ascend')
    .limit(ids.size)
    .options({ deadline: new Date(deadline) })
    .exec();
  const run: string[] = [];
  let revision = 0;
  for (const kv of page.kvs) {
    const id = proposalIdOf(kv);
    if (keys.seqOf(kv.key.toString('utf8')) !== seq + run.length || id === undefined || !ids.has(id)) break;
    run.push(id);
    revision = Number(kv.create_revision);
  }
  return { ids: run, revision };
}
