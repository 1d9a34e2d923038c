/** Why the local cluster is coming down: Ctrl-C / SIGTERM, or a node that ended on its own. */
export type StopReason<E> = { kind: 'signal'; signal: NodeJS.Signals } | { kind: 'exit'; exit: E };

/**
 * Waits for SIGINT or SIGTERM, or for `exit` to resolve. The handlers are removed afterwards,
 * and while they are installed a signal no longer kills the process before the nodes stop.
 */
export function untilStopSignal<E>(exit: Promise<E>): Promise<StopReason<E>> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      cleanup();
      resolve({ kind: 'signal', signal });
    };
    const cleanup = (): void => {
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    };
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
    void exit.then((value) => {
      cleanup();
      resolve({ kind: 'exit', exit: value });
    });
  });
}
