import type { StateAssembly, StateCapture } from '../contracts/metadata-consensus.js';
import type { OwnershipState, PendingAudit, TransferIntent, Ownership } from './ownership.js';
import { emptyOwnershipState, putIntent, putPending } from './ownership-index.js';

/** About this many records travel in one piece (an authority is ~60 bytes of JSON, an intent ~400). */
export const OWNERSHIP_RECORDS_PER_PIECE = 1_000;

/** One piece of a captured ownership state: a run of one kind of record, in key order. */
type Piece =
  | { kind: 'head'; format: 1 }
  | { kind: 'authorities'; records: [string, Ownership][] }
  | { kind: 'pending'; records: PendingAudit[] }
  | { kind: 'transfers'; records: TransferIntent[] };

/**
 * A frozen copy of the state, taken now in O(1) (copy-on-write clones of the three primary
 * trees; their records are never changed in place), read later as pieces of about a thousand
 * records, so a snapshot of a million authorities never holds the event loop for the whole state.
 */
export function captureOwnership(state: OwnershipState): StateCapture {
  const authorities = state.authorities.clone();
  const pending = state.pending.clone();
  const transfers = state.transfers.clone();
  return {
    *pieces(): IterableIterator<Piece> {
      yield { kind: 'head', format: 1 };
      yield* chunked('authorities', authorities.entries());
      yield* chunked('pending', pending.values());
      yield* chunked('transfers', transfers.values());
    },
  };
}

function* chunked<K extends Exclude<Piece['kind'], 'head'>, T>(kind: K, records: Iterable<T>): IterableIterator<Piece> {
  let batch: T[] = [];
  for (const record of records) {
    batch.push(record);
    if (batch.length >= OWNERSHIP_RECORDS_PER_PIECE) {
      yield { kind, records: batch } as Piece;
      batch = [];
    }
  }
  if (batch.length > 0) yield { kind, records: batch } as Piece;
}

/**
 * Rebuilds a state piece by piece from the pieces of `captureOwnership`, indexes included (each
 * piece is bounded work). Records are copied in: a piece may be shared with a stored snapshot.
 */
export function assembleOwnership(): StateAssembly<OwnershipState> {
  const state = emptyOwnershipState();
  let headSeen = false;
  return {
    add(raw) {
      const piece = raw as Piece;
      if (!piece || typeof piece !== 'object' || typeof piece.kind !== 'string') throw malformed('a piece is not an object with a kind');
      if (piece.kind === 'head') {
        if (piece.format !== 1) throw malformed(`unknown piece format ${String(piece.format)}`);
        headSeen = true;
        return;
      }
      if (!headSeen) throw malformed('records arrived before the head piece');
      if (!Array.isArray(piece.records)) throw malformed(`a ${piece.kind} piece has no records`);
      switch (piece.kind) {
        case 'authorities':
          for (const entry of piece.records) {
            if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !entry[1] || typeof entry[1] !== 'object') {
              throw malformed('an authority entry is not [id, {home, epoch}]');
            }
            state.authorities.set(entry[0], entry[1].catchUp ? { home: entry[1].home, epoch: entry[1].epoch, catchUp: structuredClone(entry[1].catchUp) } : { home: entry[1].home, epoch: entry[1].epoch });
          }
          return;
        case 'pending':
          for (const pending of piece.records) putPending(state, structuredClone(pending));
          return;
        case 'transfers':
          for (const intent of piece.records) putIntent(state, structuredClone(intent));
          return;
        default:
          throw malformed(`unknown piece kind ${String((piece as { kind: unknown }).kind)}`);
      }
    },
    finish() {
      if (!headSeen) throw malformed('no head piece');
      return state;
    },
  };
}

function malformed(why: string): Error {
  return new Error(`ownership snapshot is malformed: ${why}`);
}
