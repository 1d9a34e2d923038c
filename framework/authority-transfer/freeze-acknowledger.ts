import type { Clock, Timer, Logger } from '@baton/contracts';
import type { OwnershipConsensus } from './audit-projection.js';
import type { ChangeFeed } from './change-feed.js';
import { intentsOf } from './ownership-index.js';
import type { TransferIntent } from './ownership.js';

export interface FreezeAcknowledgerOptions {
  /** How often frozen transfers still missing this member's final serial are looked for. */
  sweepIntervalMs?: number;
  retryDelayMs?: number;
}

/**
 * The source side of a freeze. When this member applies the freeze of a transfer it is a
 * source of, it reads the highest serial its feed handed out, in the same synchronous step
 * (the fence refuses the authority's writes from that apply on), and records it as its final
 * serial by a consensus command. A member that missed the moment (it restarted, the proposal
 * failed, it caught up by snapshot) records its current serial instead, which covers as much.
 *
 * On the target side, a final serial applied for a transfer to this member's datacenter calls
 * `onFinalForTarget`, so the member pulls the source feed at once instead of at its next round.
 */
export class FreezeAcknowledger {
  private readonly unsubscribe: (() => void)[] = [];
  private sweepTimer: Timer | undefined;
  private readonly recording = new Set<string>();
  private stopped = true;
  private readonly sweepIntervalMs: number;
  private readonly retryDelayMs: number;

  constructor(
    private readonly consensus: OwnershipConsensus,
    private readonly feed: ChangeFeed,
    private readonly datacenter: string,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly onFinalForTarget?: (intent: TransferIntent) => void,
    options: FreezeAcknowledgerOptions = {},
  ) {
    this.sweepIntervalMs = options.sweepIntervalMs ?? 1_000;
    this.retryDelayMs = options.retryDelayMs ?? 100;
  }

  get self(): string {
    return this.feed.self;
  }

  start(): void {
    this.stopped = false;
    this.unsubscribe.push(
      this.consensus.watch((_view, entry) => {
        const { command, result } = entry;
        if (!result.ok || !('intent' in result)) return;
        if (command.type === 'freeze_transfer' && result.intent.sources.some((s) => s.member === this.self)) {
          this.record(result.intent, this.feed.assignedSerial());
        }
        if (command.type === 'record_final' && result.intent.target === this.datacenter) this.onFinalForTarget?.(result.intent);
      }),
    );
    this.sweep();
  }

  stop(): void {
    this.stopped = true;
    for (const off of this.unsubscribe.splice(0)) off();
    this.sweepTimer?.cancel();
    this.sweepTimer = undefined;
  }

  /** Records the final serial of every frozen transfer from this datacenter that lacks this member's. */
  private sweep(): void {
    if (this.stopped) return;
    const { state } = this.consensus.view();
    for (const intent of intentsOf(state, state.transfersBySource, this.datacenter)) {
      if (intent.frozen && intent.sources.some((s) => s.member === this.self && s.final === undefined)) {
        this.record(intent, this.feed.assignedSerial());
      }
    }
    this.sweepTimer = this.clock.setTimer(this.sweepIntervalMs, () => this.sweep());
  }

  private record(intent: TransferIntent, serial: number, attempt = 0): void {
    const key = `${intent.id}|${intent.freezes}`;
    if (this.stopped || (attempt === 0 && this.recording.has(key))) return;
    this.recording.add(key);
    const incarnation = this.feed.incarnation;
    this.consensus
      .propose({ type: 'record_final', id: intent.id, authority: intent.authority, member: this.self, incarnation, serial, freeze: intent.freezes })
      .then(
        () => this.recording.delete(key),
        (error) => {
          const current = this.consensus.view().state.transfers.get(intent.authority);
          const missing = current?.id === intent.id && current.frozen && current.freezes === intent.freezes && current.sources.some((s) => s.member === this.self && s.final === undefined);
          if (!missing || this.stopped) {
            this.recording.delete(key);
            return;
          }
          this.log.debug({ transfer: intent.id, err: (error as Error).message }, 'recording the final serial failed; retrying');
          const delay = Math.min(2_000, this.retryDelayMs * 2 ** Math.min(attempt, 5));
          this.clock.setTimer(delay, () => this.record(intent, serial, attempt + 1));
        },
      );
  }
}
