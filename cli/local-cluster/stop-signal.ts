/**
 * Catches SIGINT, SIGTERM and SIGHUP (a closed terminal) from the moment it is made, before the
 * nodes start, so `baton up` stops its nodes in order whichever of them arrives, during start-up
 * too. `signal` aborts on the first one; `dispose` restores the default handling.
 */
export class StopSignals {
  private readonly controller = new AbortController();
  private received: NodeJS.Signals | undefined;
  private readonly waiters = new Set<(signal: NodeJS.Signals) => void>();
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    if (this.received) return;
    this.received = signal;
    this.controller.abort(new Error(`${signal} received`));
    for (const waiter of this.waiters) waiter(signal);
  };

  constructor() {
    process.on('SIGINT', this.onSignal).on('SIGTERM', this.onSignal).on('SIGHUP', this.onSignal);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Resolves on the first SIGINT/SIGTERM/SIGHUP (at once if one came already). */
  next(): Promise<NodeJS.Signals> {
    return new Promise((resolve) => {
      if (this.received) return resolve(this.received);
      this.waiters.add(resolve);
    });
  }

  dispose(): void {
    process.off('SIGINT', this.onSignal).off('SIGTERM', this.onSignal).off('SIGHUP', this.onSignal);
  }
}
