import type { Clock } from '@baton/contracts';
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

/** How often a wait for the applied index looks again between applied commands. */
const APPLIED_RECHECK_MS = 25;

/**
 * Waits until this member has applied the log through `index` (`until` passes, or `signal`
 * aborts). A proposal forwarded to the leader is answered once the leader applied it, which may
 * be before this member has: what this member's view shows about it is read only after this.
 * Checked on every applied command and, as a snapshot install advances the index with no
 * command, every few milliseconds.
 */
export function waitForApplied(
  consensus: OwnershipConsensus,
  clock: Clock,
  index: number,
  options: { until: number; signal?: AbortSignal },
): Promise<IntentWait> {
  const reached = () => consensus.view().applied.index >= index;
  if (reached()) return Promise.resolve('met');
  return new Promise((resolve) => {
    if (options.signal?.aborted) return resolve('aborted');
    let done = false;
    let recheck: { cancel(): void } | undefined;
    const finish = (outcome: IntentWait) => {
      if (done) return;
      done = true;
      unwatch();
      deadline.cancel();
      recheck?.cancel();
      options.signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const onAbort = () => finish('aborted');
    const unwatch = consensus.watch(() => {
      if (reached()) finish('met');
    });
    const poll = () => {
      if (reached()) return finish('met');
      recheck = clock.setTimer(APPLIED_RECHECK_MS, poll);
    };
    recheck = clock.setTimer(APPLIED_RECHECK_MS, poll);
    const deadline = clock.setTimer(Math.max(0, options.until - clock.now()), () => finish(reached() ? 'met' : 'timed_out'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
