import type { StateAssembly, StateCapture } from '@baton/contracts';
import type { NodeRecord, PendingTransfer, PlannedMove, StreamRecord } from './model.js';
import type { PlanRecord } from './plan-record.js';
import { StreamMetadata, type RebalanceRun, type StreamMetadataSnapshot } from './stream-metadata.js';
import { readPieces, recordPieces, type PendingAudit, type RecordsPiece, type TrailChain } from '@baton/consensus';

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
type HeadPiece = { kind: 'head'; format: 2; rebalance?: Omit<RebalanceRun, 'queue'>; auditChain?: TrailChain; plans?: PlanRecord[]; view?: number };
type Piece =
  | HeadPiece
  | RecordsPiece<'nodes', NodeRecord>
  | RecordsPiece<'streams', StreamRecord>
  | RecordsPiece<'transfers', PendingTransfer>
  | RecordsPiece<'moves', PlannedMove>
  | RecordsPiece<'audit', PendingAudit>
  | RecordsPiece<'planMoves', PlanMove>;

/** A waiting plan's move, in pieces of their own: a plan can hold a move per stream, so its moves never ride in the head. */
type PlanMove = PlannedMove & { plan: string };

function* planMoves(plans: readonly PlanRecord[]): IterableIterator<PlanMove> {
  for (const plan of plans) for (const move of plan.moves ?? []) yield { plan: plan.id, stream: move.stream, target: move.target };
}

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
  const chain = state.auditChain;
  const plans = state.plans.records();
  yield {
    kind: 'head',
    format: 2,
    ...(rebalance ? { rebalance: rebalance.tallies } : {}),
    ...(chain.head ? { auditChain: chain } : {}),
    // At most MAX_PLANS plans, without their moves (pieces of their own follow): the head stays small.
    ...(plans.length > 0 ? { plans: plans.map(({ moves: _moves, ...plan }) => ({ ...plan, ...(_moves ? { moves: [] } : {}) })) } : {}),
    view: state.viewAt,
  };
  yield* recordPieces('nodes', state.nodes(), RECORDS_PER_PIECE);
  // A stream's producer marks make its JSON longer: each counts as one more record.
  yield* recordPieces('streams', state.streams(), RECORDS_PER_PIECE, (s) => 1 + Object.keys(s.producers).length);
  yield* recordPieces('transfers', state.transfers(), RECORDS_PER_PIECE);
  if (rebalance) yield* recordPieces('moves', rebalance.moves.slice(rebalance.next).values(), RECORDS_PER_PIECE);
  // A sealed record is several hundred bytes of JSON: each counts as four.
  yield* recordPieces('audit', state.auditPendingRecords(), RECORDS_PER_PIECE, () => 4);
  yield* recordPieces('planMoves', planMoves(plans), RECORDS_PER_PIECE);
}

/** Rebuilds a state piece by piece, indexes included, from the pieces of `captureMetadata`. */
export function assembleMetadata(): StateAssembly<StreamMetadata> {
  const state = new StreamMetadata();
  let plans: { records: PlanRecord[]; view: number } = { records: [], view: 0 };
  return readPieces<StreamMetadata, HeadPiece>({
    what: 'stream metadata snapshot',
    format: 2,
    head(head) {
      if (head.rebalance) state.restoreRebalance(head.rebalance);
      if (head.auditChain) state.auditChain = structuredClone(head.auditChain);
      plans = { records: head.plans ?? [], view: head.view ?? 0 };
    },
    records: {
      nodes(records) {
        for (const node of records as NodeRecord[]) state.putNode({ ...node });
      },
      streams(records) {
        for (const stream of records as StreamRecord[]) state.putStream({ ...stream, producers: { ...stream.producers } });
      },
      transfers(records) {
        for (const transfer of records as PendingTransfer[]) state.addTransfer({ ...transfer });
      },
      moves(records) {
        state.appendRebalanceMoves(records as PlannedMove[]);
      },
      audit(records) {
        for (const pending of records as PendingAudit[]) state.putAuditPending(structuredClone(pending));
      },
      planMoves(records) {
        for (const move of records as PlanMove[]) {
          const plan = plans.records.find((p) => p.id === move.plan);
          if (!plan?.moves) throw new Error(`stream metadata snapshot is malformed: a move of plan ${move.plan}, which holds no moves`);
          plan.moves.push({ stream: move.stream, target: move.target });
        }
      },
    },
    // The records counted as changes while they were put back: the view is the one the snapshot had.
    finish: () => {
      state.restorePlans(plans.records, plans.view);
      return state;
    },
  });
}
