import type { AuditListOptions, AuditRecord, AuditStore } from '@baton/contracts';
import type { {{className}}Options } from './options.js';

/**
 * {{className}}: an AuditStore (baton/framework/contracts/audit-store.ts), the durable audit
 * trail of a member's ownership changes (one trail per authority, or per stream cluster).
 *
 * Every method below throws until you implement it; the conformance suite in
 * test/{{fileName}}.test.ts states the contract one rule per test. In short: `put` is idempotent
 * by (authority, commit_index, seq) and refuses a different record under an existing identity with
 * AuditConflictError; any failure to read or write raises StoreUnavailableError (the API then
 * answers 503 rather than guess).
 */
export class {{className}} implements AuditStore {
  constructor(readonly options: {{className}}Options) {}

  async put(record: AuditRecord): Promise<{ created: boolean }> {
    throw notImplemented('put', { id: record.id, authority: record.authority, commit_index: record.commit_index });
  }

  async byId(id: string): Promise<AuditRecord | undefined> {
    throw notImplemented('byId', { id });
  }

  async latest(authority: string): Promise<AuditRecord | undefined> {
    throw notImplemented('latest', { authority });
  }

  async list(authority: string, options?: AuditListOptions): Promise<AuditRecord[]> {
    throw notImplemented('list', { authority, ...options });
  }
}

function notImplemented(method: string, args: Record<string, unknown>): Error {
  return new Error(
    `{{className}}.${method}(${JSON.stringify(args)}) is not implemented yet: implement it in src/{{fileName}}.ts`,
  );
}
