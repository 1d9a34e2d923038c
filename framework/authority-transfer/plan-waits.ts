import type { Clock } from '@baton/contracts';
import type { OwnershipConsensus } from './audit-projection.js';
import { waitForApplied } from './intent-wait.js';
import type { OwnershipState } from './ownership.js';
import { abandonedKey } from './ownership-index.js';
import type { PlanRegistry } from './plan-registry.js';
import { CatchUpTimeoutError, TransferCancelledError, TransferReleasedError } from './transfer-errors.js';
import type { TransferPlan } from './transfer-plan.js';

/** What a run whose plan was abandoned answers: "cancelled", or what ended its registration. */
export function endedAnswer(plan: TransferPlan): Error {
  return plan.endedBy ?? new TransferCancelledError(plan.id, plan.authority);
}

/**
 * Waits until this member applied the log through `index` (a proposal the leader answered),
 * until `until` (the plan's deadline unless said); a cancel ends the wait with the run's answer.
 * Past it the run goes on and the view it then reads decides. Once the plan is marked
 * registered, then, every entry its watcher sees comes after the registration.
 */
export async function untilPlanApplied(
  deps: { consensus: OwnershipConsensus; clock: Clock },
  plan: TransferPlan,
  index: number,
  until = plan.deadline,
): Promise<'met' | 'timed_out'> {
  const outcome = await waitForApplied(deps.consensus, deps.clock, index, { until, signal: plan.signal });
  if (outcome === 'aborted' || plan.isAbandoned()) throw endedAnswer(plan);
  return outcome;
}

/** The answer for a transfer whose registration was released for `why` (undefined: not known). */
export function releasedAnswer(plan: TransferPlan, why: string | undefined, budgetMs: number, barrier?: number): Error {
  if (why === 'cancelled') return new TransferCancelledError(plan.id, plan.authority);
  if (why === 'expired' || why === 'timed_out') return new CatchUpTimeoutError(plan.id, plan.authority, barrier, barrier === undefined ? undefined : plan.frontier, budgetMs);
  return new TransferReleasedError(plan.id, plan.authority, why ? `released: ${why}` : 'ended on its driver');
}

/** Why the key's registration was released, as the replicated state (or this member, for one never registered) knows it. */
export function releasedBecause(state: OwnershipState, registry: PlanRegistry, id: string): string | undefined {
  return abandonedKey(state, id)?.why ?? registry.abandoned.lookup(id)?.why;
}
