import { AuditProjection } from '@baton/authority-transfer/internal/audit-projection.js';
import { ChangeFeed } from '@baton/authority-transfer/internal/change-feed.js';
import { FreezeAcknowledger } from '@baton/authority-transfer/internal/freeze-acknowledger.js';
import type { OwnershipCommand, OwnershipResult, OwnershipState } from '@baton/authority-transfer/internal/ownership.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import {
  TransferDriver as PlannedTransferEngine,
  type PlannedTransferDeps,
  type PlannedTransferOptions,
} from '@baton/authority-transfer/internal/transfer-driver.js';
import type { TransferRequest } from '@baton/authority-transfer/internal/transfer-plan.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { MemoryAuditStore } from '@baton/plugin-memory/internal/memory-audit-store.js';
import { ScriptedFrontierProbe } from './scripted-frontier-probe.js';

export type OwnershipLocalConsensus = LocalConsensus<OwnershipState, OwnershipCommand, OwnershipResult>;

/** One member's planned-transfer engine over fakes: single-member consensus, memory audit, scripted probe. */
export async function engineHarness(
  options: { self?: string; datacenter?: string; voters?: string[]; engine?: Partial<PlannedTransferOptions>; clocks?: PlannedTransferDeps['clocks'] } = {},
) {
  const self = options.self ?? 'east-1';
  const clock = new VirtualClock();
  const consensus: OwnershipLocalConsensus = new LocalConsensus(new OwnershipStateMachine(), {
    self,
    voters: options.voters ?? [self],
    clock,
  });
  const audit = new MemoryAuditStore();
  const log = createSilentLogger();
  const projection = new AuditProjection(consensus, audit, clock, log);
  const probe = new ScriptedFrontierProbe(clock);
  const feed = new ChangeFeed(self, { mintIncarnation: () => `${self}-inc` });
  await feed.open();
  const engine = new PlannedTransferEngine({ consensus, audit, projection, probe, feed, clock, log, ...(options.clocks ? { clocks: options.clocks } : {}) }, options.engine);
  // This member is the source's only member: it records its final serial when a transfer freezes.
  const freezes = new FreezeAcknowledger(consensus, feed, options.datacenter ?? 'east', clock, log);
  projection.start();
  freezes.start();
  return { self, clock, consensus, audit, projection, probe, feed, engine, log, freezes };
}

/** Establishes `authority` at `home` through the raw command, as a bootstrap or failover would. */
export async function establish(consensus: OwnershipLocalConsensus, authority: string, home: string): Promise<void> {
  await consensus.propose({ type: 'transfer_authority', authority, target: home });
}

export function request(overrides: Partial<TransferRequest> = {}): TransferRequest {
  return { id: '5f0c-drain-proj', authority: 'proj', source: 'east', target: 'west', actor: 'olivia', reason: 'drain east', ...overrides };
}

/** Settles a promise into a value or an error, so a test can inspect either without racing. */
export function settle<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error) => ({ ok: false as const, error }),
  );
}

/**
 * Registers, freezes and records the final serial of a transfer straight through consensus,
 * then commits it: a commit as the state machine demands it, without an engine run.
 */
export async function commitThroughConsensus(consensus: OwnershipLocalConsensus, r: TransferRequest, final = 0) {
  await consensus.propose({ type: 'register_transfer', ...r, driver: 'elsewhere', sources: [{ member: 'src', incarnation: 'i', serial: 0 }], deadline: Number.MAX_SAFE_INTEGER });
  await consensus.propose({ type: 'freeze_transfer', id: r.id, authority: r.authority, thawBy: Number.MAX_SAFE_INTEGER });
  await consensus.propose({ type: 'record_final', id: r.id, authority: r.authority, member: 'src', incarnation: 'i', serial: final, freeze: 1 });
  return consensus.propose({ type: 'commit_planned_transfer', ...r, barrier: final });
}

/**
 * Runs `before` just before the next commit_planned_transfer is proposed (and only then), so a
 * test can inject a fault (failNext, hold) into the commit itself rather than into the
 * registration or freeze that precede it.
 */
export function atNextCommit(consensus: OwnershipLocalConsensus, before: () => void): void {
  const propose = consensus.propose.bind(consensus);
  let armed = true;
  consensus.propose = (command, options) => {
    if (armed && command.type === 'commit_planned_transfer') {
      armed = false;
      before();
    }
    return propose(command, options);
  };
}
