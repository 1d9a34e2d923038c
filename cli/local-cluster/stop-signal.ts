/** Why the local cluster is coming down: Ctrl-C / SIGTERM, or a node that ended on its own. */
export type StopReason<E> = { kind: 'signal'; signal: NodeJS.Signals } | { kind: 'exit'; exit: E };

/**
 * Catches SIGINT and SIGTERM from the moment it is made, before the nodes start: the nodes run
 * in their own process group, so a Ctrl-C during start-up must not end `baton up` and leave them
 * running. `signal` aborts on the first one; `dispose` restores the default handling.
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
    process.on('SIGINT', this.onSignal).on('SIGTERM', this.onSignal);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Resolves on the first SIGINT/SIGTERM (at once if one came already) or when `exit` resolves. */
  until<E>(exit: Promise<E>): Promise<StopReason<E>> {
    return new Promise((resolve) => {
      if (this.received) return resolve({ kind: 'signal', signal: this.received });
      const waiter = (signal: NodeJS.Signals): void => resolve({ kind: 'signal', signal });
      this.waiters.add(waiter);
      void exit.then((value) => {
        this.waiters.delete(waiter);
        resolve({ kind: 'exit', exit: value });
      });
    });
  }

  dispose(): void {
    process.off('SIGINT', this.onSignal).off('SIGTERM', this.onSignal);
  }
}
