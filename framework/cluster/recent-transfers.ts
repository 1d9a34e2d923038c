import type { Clock } from '@baton/contracts';
import type { BatonMetrics, TransferNamed } from '@baton/http';
import type { RecentTransfer } from './schemas.js';

/** What a member keeps for the plot: the last few minutes, and never more than this many. */
export const RECENT_TRANSFERS_WINDOW_MS = 10 * 60_000;
export const MAX_RECENT_TRANSFERS = 200;

/**
 * The transfers this member settled lately, with how long each took, as its metrics recorded
 * them (so the plot and baton_transfer_duration_seconds count the same transfers). Bounded in
 * age and in number.
 */
export class RecentTransfers {
  private readonly entries: RecentTransfer[] = [];
  private readonly unsubscribe: () => void;

  constructor(
    metrics: BatonMetrics,
    private readonly clock: Clock,
  ) {
    this.unsubscribe = metrics.onTransferRecorded((outcome, durationMs, about) => this.add(outcome, durationMs, about));
  }

  add(outcome: string, durationMs: number, about?: TransferNamed): void {
    this.entries.push({ at: this.clock.now(), outcome, durationMs: Math.max(0, durationMs), ...about });
    if (this.entries.length > MAX_RECENT_TRANSFERS) this.entries.splice(0, this.entries.length - MAX_RECENT_TRANSFERS);
  }

  /** Oldest first, only those within the window. */
  list(): RecentTransfer[] {
    const since = this.clock.now() - RECENT_TRANSFERS_WINDOW_MS;
    while (this.entries.length > 0 && this.entries[0].at < since) this.entries.shift();
    return [...this.entries];
  }

  stop(): void {
    this.unsubscribe();
  }
}
