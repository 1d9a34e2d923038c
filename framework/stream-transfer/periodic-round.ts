import type { Clock, Logger, Timer } from '@baton/contracts';

/**
 * A round run again `everyMs` after the last one ended (never two at once), from `start` until
 * `stop`: the loop of the leader's background duties (maintenance windows, plan pacing). A
 * round that fails is logged and the next one runs as usual.
 */
export class PeriodicRound {
  private timer?: Timer;
  private stopped = true;

  constructor(
    private readonly deps: { clock: Clock; logger: Logger; everyMs: number; what: string },
    private readonly round: () => Promise<void>,
  ) {}

  start(): void {
    this.stopped = false;
    this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private tick(): void {
    if (this.stopped) return;
    void this.round()
      .catch((error) => this.deps.logger.warn({ err: error }, `${this.deps.what} failed`))
      .finally(() => {
        if (!this.stopped) this.timer = this.deps.clock.setTimer(this.deps.everyMs, () => this.tick());
      });
  }
}
