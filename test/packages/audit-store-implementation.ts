/**
 * What a plugin author writes into the generated `src/<name>.ts` of an audit-store plugin: a
 * small in-memory AuditStore, every instance its own (so the generated suite's factory, which
 * builds a host per test, gets an isolated empty store as it is). Written from the contract
 * (framework/contracts/audit-store.ts) and the helpers @baton/contracts exports with it.
 */
export function memoryAuditStoreSource(className: string): string {
  return `import {
  AuditConflictError,
  auditListOptions,
  checkAuditRecord,
  differingAuditFields,
  type AuditListOptions,
  type AuditRecord,
  type AuditStore,
} from '@baton/contracts';
import type { ${className}Options } from './options.js';

/** Records in memory, by (authority, commit_index) and by transfer id; copies in, copies out. */
export class ${className} implements AuditStore {
  private readonly histories = new Map<string, Map<number, AuditRecord>>();
  private readonly ids = new Map<string, AuditRecord>();

  constructor(readonly options: ${className}Options) {}

  // No await before the map is written: concurrent puts of one identity see each other.
  async put(record: AuditRecord): Promise<{ created: boolean }> {
    checkAuditRecord(record);
    const history = this.histories.get(record.authority) ?? new Map<number, AuditRecord>();
    const stored = history.get(record.commit_index);
    if (stored) {
      const differing = differingAuditFields(stored, record);
      if (differing.length > 0) throw new AuditConflictError(record, \`it differs in \${differing.join(', ')}\`);
      return { created: false };
    }
    const sameId = this.ids.get(record.id);
    if (sameId) {
      throw new AuditConflictError(record, \`transfer \${record.id} is recorded at \${sameId.authority} @ \${sameId.commit_index}\`);
    }
    const copy = { ...record };
    history.set(copy.commit_index, copy);
    this.histories.set(copy.authority, history);
    this.ids.set(copy.id, copy);
    return { created: true };
  }

  async byId(id: string): Promise<AuditRecord | undefined> {
    const record = this.ids.get(id);
    return record && { ...record };
  }

  async latest(authority: string): Promise<AuditRecord | undefined> {
    return (await this.list(authority, { limit: 1 }))[0];
  }

  async list(authority: string, options?: AuditListOptions): Promise<AuditRecord[]> {
    const { limit, before } = auditListOptions(options, '${className}');
    return [...(this.histories.get(authority)?.values() ?? [])]
      .filter((record) => record.commit_index < before)
      .sort((a, b) => b.commit_index - a.commit_index)
      .slice(0, limit)
      .map((record) => ({ ...record }));
  }
}
`;
}
