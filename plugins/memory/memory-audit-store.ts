import {
  AuditConflictError,
  auditListOptions,
  isBeforeCursor,
  newestFirst,
  seqOf,
  type AuditListOptions,
  type AuditRecord,
  type AuditStore,
} from '@baton/contracts';
import { checkAuditRecord, copyAuditRecord, differingFields } from './audit-record-copy.js';


/**
 * The reference AuditStore: records in process memory, identified by (authority, commit_index, seq)
 * and indexed by transfer id. Records are copied in and out. `failWith` takes it down on
 * purpose, so tests can drive the 503 paths of a host.
 */
export class MemoryAuditStore implements AuditStore {
  private readonly byAuthority = new Map<string, Map<string, AuditRecord>>();
  private readonly byTransferId = new Map<string, AuditRecord>();
  private failure: Error | undefined;

  /** Every operation rejects with `error` until called again with `undefined`. */
  failWith(error: Error | undefined): void {
    this.failure = error;
  }

  async put(record: AuditRecord): Promise<{ created: boolean }> {
    this.checkAvailable();
    checkAuditRecord(record);
    const atPosition = this.byAuthority.get(record.authority)?.get(positionKey(record));
    if (atPosition) {
      const differences = differingFields(atPosition, record);
      if (differences.length === 0) return { created: false };
      throw new AuditConflictError(record, `the stored record differs in ${differences.join(', ')}`);
    }
    const withSameId = this.byTransferId.get(record.id);
    if (withSameId) {
      throw new AuditConflictError(
        record,
        `transfer id ${record.id} already records ${withSameId.authority} @ ${withSameId.commit_index}`,
      );
    }
    const stored = copyAuditRecord(record);
    let history = this.byAuthority.get(stored.authority);
    if (!history) this.byAuthority.set(stored.authority, (history = new Map()));
    history.set(positionKey(stored), stored);
    this.byTransferId.set(stored.id, stored);
    return { created: true };
  }

  async byId(id: string): Promise<AuditRecord | undefined> {
    this.checkAvailable();
    const stored = this.byTransferId.get(id);
    return stored && copyAuditRecord(stored);
  }

  async latest(authority: string): Promise<AuditRecord | undefined> {
    this.checkAvailable();
    let newest: AuditRecord | undefined;
    for (const record of this.byAuthority.get(authority)?.values() ?? []) {
      if (!newest || newestFirst(record, newest) < 0) newest = record;
    }
    return newest && copyAuditRecord(newest);
  }

  async list(authority: string, options?: AuditListOptions): Promise<AuditRecord[]> {
    this.checkAvailable();
    const cursor = auditListOptions(options, 'memory audit store');
    const { limit } = cursor;
    const history = [...(this.byAuthority.get(authority)?.values() ?? [])].filter((record) => isBeforeCursor(record, cursor));
    history.sort(newestFirst);
    return history.slice(0, limit).map(copyAuditRecord);
  }

  private checkAvailable(): void {
    if (this.failure) throw this.failure;
  }
}

function positionKey(record: AuditRecord): string {
  return `${record.commit_index}:${seqOf(record)}`;
}
