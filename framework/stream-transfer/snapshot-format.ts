import type { NodeRecord, PendingTransfer, StreamRecord } from './model.js';
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
