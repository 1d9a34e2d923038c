import type { AuditStore, Clock, Logger } from '@baton/contracts';
import type { BatonMetrics } from '@baton/http';
import type { AuditProjection, OwnershipConsensus } from './audit-projection.js';
import type { ChangeFeed } from './change-feed.js';
import type { ClockSkew } from './clock-skew.js';
import type { FrontierProbe } from './frontier-probe.js';
import { DEFAULT_REPROBE_SCHEDULE, type ReprobeSchedule } from './reprobe-schedule.js';
import type { SourcePositions } from './source-positions.js';

export interface PlannedTransferOptions {
  /** How long a transfer may wait for the target to reach the barrier (seed: about 5 minutes). */
  budgetMs: number;
  /** How long one probe may take before it reads as no frontier (seed: ten seconds). */
  probeTimeoutMs: number;
  schedule: ReprobeSchedule;
  /** Re-probes while the authority is frozen: tight, since writes are refused meanwhile. */
  freezeSchedule: ReprobeSchedule;
  /**
   * How long a probe asks the target to hold its answer until it has applied the barrier (or
   * the final serials), so the plan learns of the apply at once; 0 for probes that answer at once.
   */
  frontierWaitMs: number;
  /**
   * How long a freeze may hold before it is lifted (the target then catches up on the final
   * serials unfrozen, and the transfer freezes again).
   */
  freezeBudgetMs: number;
  /** How many abandoned authorities a repeated cancel stays idempotent for (seed: 256). */
  abandonedWindow: number;
  /** Backoff of the background resolution of a commit whose outcome is unknown. */
  resolution: { initialDelayMs: number; maxDelayMs: number };
  /**
   * How often registered transfers are looked over: a freeze or a registration whose driver is
   * gone (past its deadline by `expiryGraceMs`) is lifted or released by any member.
   */
  sweepIntervalMs: number;
  expiryGraceMs: number;
}

export const DEFAULT_PLANNED_TRANSFER_OPTIONS: PlannedTransferOptions = {
  budgetMs: 5 * 60_000,
  probeTimeoutMs: 10_000,
  schedule: DEFAULT_REPROBE_SCHEDULE,
  freezeSchedule: { initialDelayMs: 2, maxDelayMs: 50 },
  frontierWaitMs: 2_000,
  freezeBudgetMs: 5_000,
  abandonedWindow: 256,
  resolution: { initialDelayMs: 500, maxDelayMs: 30_000 },
  sweepIntervalMs: 1_000,
  expiryGraceMs: 10_000,
};

export interface PlannedTransferDeps {
  consensus: OwnershipConsensus;
  audit: AuditStore;
  projection: AuditProjection;
  probe: FrontierProbe;
  feed: ChangeFeed;
  clock: Clock;
  log: Logger;
  /** Where barriers come from; this member's own feed when absent (a member alone in its datacenter). */
  sources?: SourcePositions;
  /** Transfers by outcome and their durations, when the host exposes metrics. */
  metrics?: BatonMetrics;
  /** The peers' clocks: no new transfer is driven while one is past the skew bound (clock-skew.ts). */
  clocks?: Pick<ClockSkew, 'exceeded'>;
}
