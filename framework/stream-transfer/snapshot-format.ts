import type { StateAssembly, StateCapture } from '../contracts/metadata-consensus.js';
import type { NodeRecord, PendingTransfer, PlannedMove, StreamRecord } from './model.js';
import { StreamMetadata, type RebalanceRun, type StreamMetadataSnapshot } from './stream-metadata.js';

/**
 * Reads a stream metadata snapshot: the current form (`format: 2`, records in id-sorted arrays)
 * or the earlier one (records keyed by id in objects), so a member restarted on a newer version
 * still restores what an older one stored. Throws on anything else: a snapshot is written by a
 * member, so a malformed one is a bug or a corruption, never something to guess around.
 */
export function restoreMetadata(snapshot: unknown): StreamMetadata {
  if (!snapshot || typeof snapshot !== 'object') throw malformed('not an object');
  const raw = snapshot as Record<string, unknown>;
  if (raw.format === 2) {
    if (!Array.isArray(raw.nodes) || !Array.isArray(raw.streams) || !Array.isArray(raw.transfers)) {
      throw malformed('expected arrays of nodes, streams and transfers');
    }
    return StreamMetadata.fromSnapshot(raw as unknown as StreamMetadataSnapshot);
  }
  if (isRecordMap(raw.nodes) && isRecordMap(raw.streams) && isRecordMap(raw.transfers)) {
    const byId = <T>(records: Record<string, unknown>) =>
      Object.keys(records)
        .sort()
        .map((id) => records[id] as T);
    const rebalance = raw.rebalance as RebalanceRun | undefined;
    return StreamMetadata.fromSnapshot({
      format: 2,
      nodes: byId<NodeRecord>(raw.nodes),
      streams: byId<StreamRecord>(raw.streams),
      transfers: byId<PendingTransfer>(raw.transfers),
      ...(rebalance && Array.isArray(rebalance.queue) ? { rebalance } : {}),
    });
  }
  throw malformed('expected {format: 2, nodes, streams, transfers}');
}

function isRecordMap(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function malformed(why: string): Error {
  return new Error(`stream metadata snapshot is malformed: ${why}`);
}

/** About this many records (a stream counts one more per producer mark) travel in one piece. */
export const RECORDS_PER_PIECE = 1_000;

/** One piece of a captured state: a run of one kind of record, in id order. */
type Piece =
  | { kind: 'head'; format: 2; rebalance?: Omit<RebalanceRun, 'queue'> }
  | { kind: 'nodes'; records: NodeRecord[] }
  | { kind: 'streams'; records: StreamRecord[] }
  | { kind: 'transfers'; records: PendingTransfer[] }
  | { kind: 'moves'; records: PlannedMove[] };

/**
 * A frozen copy of the state (a copy-on-write clone: O(nodes) now), read later as pieces of about
 * a thousand records each, so taking a snapshot never holds the event loop for the whole state.
 */
export function captureMetadata(state: StreamMetadata): StateCapture {
  const frozen = state.clone();
  return { pieces: () => piecesOf(frozen) };
}

function* piecesOf(state: StreamMetadata): IterableIterator<Piece> {
  const rebalance = state.rebalanceParts();
  yield { kind: 'head', format: 2, ...(rebalance ? { rebalance: rebalance.tallies } : {}) };
  yield* chunked('nodes', state.nodes(), () => 1);
  yield* chunked('streams', state.streams(), (s) => 1 + Object.keys(s.producers).length);
  yield* chunked('transfers', state.transfers(), () => 1);
  if (rebalance) yield* chunked('moves', rebalance.moves.slice(rebalance.next).values(), () => 1);
}

function* chunked<K extends Piece['kind'], T>(kind: K, records: Iterable<T>, weight: (record: T) => number): IterableIterator<Piece> {
  let batch: T[] = [];
  let size = 0;
  for (const record of records) {
    batch.push(record);
    size += weight(record);
    if (size >= RECORDS_PER_PIECE) {
      yield { kind, records: batch } as Piece;
      batch = [];
      size = 0;
    }
  }
  if (batch.length > 0) yield { kind, records: batch } as Piece;
}

/** Rebuilds a state piece by piece, indexes included, from the pieces of `captureMetadata`. */
export function assembleMetadata(): StateAssembly<StreamMetadata> {
  const state = new StreamMetadata();
  let headSeen = false;
  return {
    add(raw) {
      const piece = raw as Piece;
      if (!piece || typeof piece !== 'object' || typeof piece.kind !== 'string') throw malformed('a piece is not an object with a kind');
      if (piece.kind === 'head') {
        if (piece.format !== 2) throw malformed(`unknown piece format ${String(piece.format)}`);
        headSeen = true;
        if (piece.rebalance) state.restoreRebalance(piece.rebalance);
        return;
      }
      if (!headSeen) throw malformed('records arrived before the head piece');
      if (!Array.isArray(piece.records)) throw malformed(`a ${piece.kind} piece has no records`);
      switch (piece.kind) {
        case 'nodes':
          for (const node of piece.records) state.putNode({ ...node });
          return;
        case 'streams':
          for (const stream of piece.records) state.putStream({ ...stream, producers: { ...stream.producers } });
          return;
        case 'transfers':
          for (const transfer of piece.records) state.addTransfer({ ...transfer });
          return;
        case 'moves':
          state.appendRebalanceMoves(piece.records);
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
