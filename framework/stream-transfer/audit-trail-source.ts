import type { AuditTrailSource } from '@baton/consensus';
import { sealedIds } from './audit-trail.js';
import type { StreamCommand, StreamResult } from './commands.js';
import type { StreamMetadata } from './stream-metadata.js';

/**
 * What the shared projection needs of the stream state machine: its pending records, the ids an
 * entry sealed (from the entry's position and the count its result carries) and the command that
 * acknowledges stored ones.
 */
export const streamTrailSource: AuditTrailSource<StreamMetadata, StreamCommand, StreamResult> = {
  pending: (state) => state.auditPendingRecords(),
  pendingById: (state, id) => state.auditPending(id),
  sealedBy: (_view, entry) => (entry.result.ok ? sealedIds(entry.position.index, entry.result.sealed) : []),
  acknowledge: (ids, member) => ({ type: 'ack-audit', ids, member }),
};
