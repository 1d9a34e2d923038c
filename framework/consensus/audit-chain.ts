import { createHash } from 'node:crypto';
import { copyAuditRecord, seqOf, type AuditRecord } from '@baton/contracts';

/**
 * The hash chain of an audit trail: each sealed record names the hash of the record sealed
 * before it on its trail, so editing, removing or reordering a stored record breaks every link
 * after it. The state machine that seals a record keeps the trail's head (and, every
 * ANCHOR_EVERY records, an anchor) in the replicated state, so a chain rewritten from the edit
 * onwards still disagrees with what consensus remembers.
 */

/** A trail's newest sealed record, as the replicated state remembers it. */
export interface TrailHead {
  /** Records sealed on the trail so far. */
  records: number;
  hash: string;
  commit_index: number;
  seq: number;
}

/** Every this many records the replicated state keeps the head as an anchor. */
export const ANCHOR_EVERY = 64;
/** Anchors kept per trail (the oldest go first): a bound on what a trail costs the state. */
export const MAX_ANCHORS = 32;

/** A trail's head and anchors: the whole of what the chain costs the replicated state. */
export interface TrailChain {
  head?: TrailHead;
  anchors: TrailHead[];
}

export function emptyChain(): TrailChain {
  return { anchors: [] };
}

/**
 * The hash of a record: SHA-256 of its JSON with every contract field but `hash`, in the
 * contract's one field order (copyAuditRecord), so equal records hash alike whatever order their
 * fields were written in, without sorting keys per record.
 */
export function auditRecordHash(record: AuditRecord): string {
  const { hash: _, ...sealed } = copyAuditRecord(record);
  return createHash('sha256').update(JSON.stringify(sealed), 'utf8').digest('hex');
}

/**
 * Links `record` after the chain's head and returns it with `prev_hash` and `hash`, and the
 * chain after it (a new object: captures may share the old one). Pure, as apply needs.
 */
export function chainRecord(chain: TrailChain, record: Omit<AuditRecord, 'prev_hash' | 'hash'>): { record: AuditRecord; chain: TrailChain } {
  const linked = { ...record, prev_hash: chain.head?.hash ?? '' } as AuditRecord;
  linked.hash = auditRecordHash(linked);
  const head: TrailHead = {
    records: (chain.head?.records ?? 0) + 1,
    hash: linked.hash,
    commit_index: linked.commit_index,
    seq: seqOf(linked),
  };
  const anchors = head.records % ANCHOR_EVERY === 0 ? [...chain.anchors, head].slice(-MAX_ANCHORS) : chain.anchors;
  return { record: linked, chain: { head, anchors } };
}

/** Where a trail first disagrees with its chain. */
export interface ChainBreak {
  /** The first record (oldest first) that does not match, or the anchor nothing matched. */
  id: string;
  commit_index: number;
  seq: number;
  why: string;
}

/**
 * `behind`: the store holds fewer records than the chain head counts, all of them matching: its
 * projection has not caught up yet (records are stored after they commit), which no check can
 * tell from records removed at the end; the head's position says how far it has to go.
 */
export type TrailVerdict =
  | { ok: true; checked: number; unchained: number; behind: boolean }
  | ({ ok: false; checked: number } & ChainBreak);

/**
 * Recomputes a trail's chain from its records, oldest first, and checks the anchors the
 * replicated state kept against them. Records from before the trail was chained (no `hash`)
 * are counted, not checked; once the chain starts, every record must carry its links.
 */
export function verifyTrail(oldestFirst: readonly AuditRecord[], chain: TrailChain = emptyChain()): TrailVerdict {
  let previous: AuditRecord | undefined;
  let checked = 0;
  let unchained = 0;
  const byPosition = new Map<string, AuditRecord>();
  const broken = (record: AuditRecord, why: string): TrailVerdict => ({
    ok: false,
    checked,
    id: record.id,
    commit_index: record.commit_index,
    seq: seqOf(record),
    why,
  });
  for (const record of oldestFirst) {
    if (record.hash === undefined && previous === undefined) {
      unchained += 1;
      continue;
    }
    if (record.hash === undefined) return broken(record, 'it carries no hash, yet the trail was chained before it');
    const expected = auditRecordHash(record);
    if (expected !== record.hash) return broken(record, `its content hashes to ${expected}, not to the ${record.hash} it carries`);
    const link = previous?.hash ?? '';
    if ((record.prev_hash ?? '') !== link) {
      return broken(record, previous ? `it names ${record.prev_hash} as its previous record, but ${previous.id} hashes to ${link}` : 'the first chained record names a previous record that is not there');
    }
    byPosition.set(`${record.commit_index}:${seqOf(record)}`, record);
    previous = record;
    checked += 1;
  }
  for (const anchor of [...chain.anchors, ...(chain.head ? [chain.head] : [])]) {
    const record = byPosition.get(`${anchor.commit_index}:${anchor.seq}`);
    if (record && record.hash !== anchor.hash) return broken(record, `the replicated state anchored ${anchor.hash} at this position`);
    if (!record && previous && anchor.commit_index < previous.commit_index) {
      return { ok: false, checked, id: `(missing at ${anchor.commit_index}.${anchor.seq})`, commit_index: anchor.commit_index, seq: anchor.seq, why: 'the replicated state anchored a record here that the store does not hold' };
    }
  }
  const head = chain.head;
  const behind = head !== undefined && !byPosition.has(`${head.commit_index}:${head.seq}`);
  return { ok: true, checked, unchained, behind };
}
