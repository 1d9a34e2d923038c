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
  copyAuditRecord,
  differingAuditFields,
  isBeforeCursor,
  newestFirst,
  seqOf,
  type AuditListOptions,
  type AuditRecord,
  type AuditStore,
} from '@baton/contracts';
import type { ${className}Options } from './options.js';

/** Records in memory, by (authority, commit_index, seq) and by id; copies in, copies out. */
export class ${className} implements AuditStore {
  private readonly histories = new Map<string, Map<string, AuditRecord>>();
  private readonly ids = new Map<string, AuditRecord>();

  constructor(readonly options: ${className}Options) {}

  // No await before the map is written: concurrent puts of one identity see each other.
  async put(record: AuditRecord): Promise<{ created: boolean }> {
    checkAuditRecord(record);
    const history = this.histories.get(record.authority) ?? new Map<string, AuditRecord>();
    const position = \`\${record.commit_index}:\${seqOf(record)}\`;
    const stored = history.get(position);
    if (stored) {
      const differing = differingAuditFields(stored, record);
      if (differing.length > 0) throw new AuditConflictError(record, \`it differs in \${differing.join(', ')}\`);
      return { created: false };
    }
    const sameId = this.ids.get(record.id);
    if (sameId) {
      throw new AuditConflictError(record, \`transfer \${record.id} is recorded at \${sameId.authority} @ \${sameId.commit_index}\`);
    }
    const copy = copyAuditRecord(record);
    history.set(position, copy);
    this.histories.set(copy.authority, history);
    this.ids.set(copy.id, copy);
    return { created: true };
  }

  async byId(id: string): Promise<AuditRecord | undefined> {
    const record = this.ids.get(id);
    return record && copyAuditRecord(record);
  }

  async latest(authority: string): Promise<AuditRecord | undefined> {
    return (await this.list(authority, { limit: 1 }))[0];
  }

  async list(authority: string, options?: AuditListOptions): Promise<AuditRecord[]> {
    const cursor = auditListOptions(options, '${className}');
    return [...(this.histories.get(authority)?.values() ?? [])]
      .filter((record) => isBeforeCursor(record, cursor))
      .sort(newestFirst)
      .slice(0, cursor.limit)
      .map(copyAuditRecord);
  }
}
`;
}
