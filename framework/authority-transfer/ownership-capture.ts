import type { StateAssembly, StateCapture } from '@baton/contracts';
import { placementOf, type AbandonedTransfer, type OwnershipState, type PendingAudit, type TransferIntent, type Ownership } from './ownership.js';
import { emptyOwnershipState, putAbandoned, putIntent, putOwnership, putPending } from './ownership-index.js';
import { readPieces, recordPieces, type RecordsPiece, type TrailChain } from '@baton/consensus';

/** About this many records travel in one piece (an authority is ~60 bytes of JSON, an intent ~400). */
export const OWNERSHIP_RECORDS_PER_PIECE = 1_000;
/** Sealed records are larger (~700 bytes with their hashes): fewer per piece, so a piece stays near the others' size. */
const PENDING_PER_PIECE = 250;
/** A chain is ~150 bytes, up to ~4 KiB with its 32 anchors: a piece of them stays under ~200 KiB. */
const CHAINS_PER_PIECE = 50;

/** One piece of a captured ownership state: a run of one kind of record, in key order. */
type Piece =
  | { kind: 'head'; format: 1; abandonedTracked?: boolean }
  | RecordsPiece<'authorities', [string, Ownership]>
  | RecordsPiece<'pending', PendingAudit>
  | RecordsPiece<'chains', [string, TrailChain]>
  | RecordsPiece<'transfers', TransferIntent>
  | RecordsPiece<'abandoned', AbandonedTransfer>;

/**
 * A frozen copy of the state, taken now in O(1) (copy-on-write clones of the five primary
 * trees; their records are never changed in place), read later as pieces of about a thousand
 * records, so a snapshot of a million authorities never holds the event loop for the whole state.
 */
export function captureOwnership(state: OwnershipState): StateCapture {
  const authorities = state.authorities.clone();
  const pending = state.pending.clone();
  const chains = state.chains.clone();
  const transfers = state.transfers.clone();
  const abandoned = state.abandoned.clone();
  const abandonedTracked = state.abandonedTracked;
  return {
    *pieces(): IterableIterator<Piece> {
      yield { kind: 'head', format: 1, abandonedTracked };
      yield* recordPieces('authorities', authorities.entries(), OWNERSHIP_RECORDS_PER_PIECE);
      yield* recordPieces('pending', pending.values(), PENDING_PER_PIECE);
      yield* recordPieces('chains', chains.entries(), CHAINS_PER_PIECE);
      yield* recordPieces('transfers', transfers.values(), OWNERSHIP_RECORDS_PER_PIECE);
      // In release order, so the bounds evict on the follower as they did on the leader.
      yield* recordPieces('abandoned', abandoned.values(), OWNERSHIP_RECORDS_PER_PIECE);
    },
  };
}

/**
 * Rebuilds a state piece by piece from the pieces of `captureOwnership`, indexes included (each
 * piece is bounded work). Records are copied in: a piece may be shared with a stored snapshot.
 */
export function assembleOwnership(): StateAssembly<OwnershipState> {
  const state = emptyOwnershipState();
  return readPieces<OwnershipState, Extract<Piece, { kind: 'head' }>>({
    what: 'ownership snapshot',
    format: 1,
    // A capture taken before keys were tracked says nothing of it: not tracked yet.
    head(head) {
      state.abandonedTracked = head.abandonedTracked === true;
    },
    records: {
      authorities(records) {
        for (const entry of records as [string, Ownership][]) {
          if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !entry[1] || typeof entry[1] !== 'object') {
            throw new Error('ownership snapshot is malformed: an authority entry is not [id, {home, epoch}]');
          }
          putOwnership(state, entry[0], {
            home: entry[1].home,
            epoch: entry[1].epoch,
            ...(entry[1].catchUp ? { catchUp: structuredClone(entry[1].catchUp) } : {}),
            ...structuredClone(placementOf(entry[1])),
          });
        }
      },
      pending(records) {
        for (const pending of records as PendingAudit[]) putPending(state, structuredClone(pending));
      },
      chains(records) {
        for (const entry of records as [string, TrailChain][]) {
          if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !entry[1] || !Array.isArray(entry[1].anchors)) {
            throw new Error('ownership snapshot is malformed: a chain entry is not [authority, {head, anchors}]');
          }
          state.chains.set(entry[0], structuredClone(entry[1]));
        }
      },
      transfers(records) {
        for (const intent of records as TransferIntent[]) putIntent(state, structuredClone(intent));
      },
      abandoned(records) {
        for (const entry of records as AbandonedTransfer[]) {
          if (!entry || typeof entry !== 'object' || typeof entry.id !== 'string' || !Number.isSafeInteger(entry.released)) {
            throw new Error('ownership snapshot is malformed: an abandoned entry has no id or release index');
          }
          putAbandoned(state, structuredClone(entry));
        }
      },
    },
    finish: () => state,
  });
}
