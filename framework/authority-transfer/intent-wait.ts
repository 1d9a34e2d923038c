import type { Clock } from '../contracts/clock.js';
import type { OwnershipConsensus } from './audit-projection.js';
import type { TransferIntent } from './ownership.js';

export type IntentWait = 'met' | 'timed_out' | 'aborted';

/**
 * Waits, on this member's applied view, until `met` holds for the authority's registered
 * transfer (undefined when none), `until` passes, or `signal` aborts. Checked at once and then
 * on every applied entry: a look-up by authority, never a scan.
 */
export function waitForIntent(
  consensus: OwnershipConsensus,
  clock: Clock,
  authority: string,
  met: (intent: TransferIntent | undefined) => boolean,
  options: { until: number; signal?: AbortSignal },
): Promise<IntentWait> {
  return new Promise((resolve) => {
    const check = () => met(consensus.view().state.transfers.get(authority));
    if (options.signal?.aborted) return resolve('aborted');
    if (check()) return resolve('met');
    let done = false;
    const finish = (outcome: IntentWait) => {
      if (done) return;
      done = true;
      unwatch();
      timer.cancel();
      options.signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const onAbort = () => finish('aborted');
    const unwatch = consensus.watch(() => {
      if (check()) finish('met');
    });
    const timer = clock.setTimer(Math.max(0, options.until - clock.now()), () => finish(check() ? 'met' : 'timed_out'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
