import type { AppliedEntry } from '@baton/contracts/internal/metadata-consensus.js';
import type { KvCommand, KvResult } from '@baton/conformance/internal/kv-state-machine.js';
import type { KvEtcdConsensus } from './etcd-fixture.js';

/**
 * Everything one member's watchers were told, in order: lets a fault test check that an entry
 * was never delivered twice nor skipped, by comparing the ledgers of several members with each
 * other and with a member that read the whole log afresh.
 */
export class EntryLedger {
  readonly entries: Array<AppliedEntry<KvCommand, KvResult>> = [];
  readonly stop: () => void;

  constructor(member: KvEtcdConsensus) {
    this.stop = member.watch((_view, entry) => this.entries.push(entry));
  }

  /** The put values in log order (each test writes unique values, so a repeat is a duplicate). */
  values(): string[] {
    return this.entries.flatMap((entry) =>
      entry.command.op === 'put' ? [entry.command.value] : [],
    );
  }

  /** Positions strictly increase: no entry repeated, none out of order. */
  inOrder(): boolean {
    return this.entries.every(
      (entry, i) => i === 0 || entry.position.index > this.entries[i - 1].position.index,
    );
  }
}
