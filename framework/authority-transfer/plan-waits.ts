import type { Clock } from '@baton/contracts';
import type { OwnershipConsensus } from './audit-projection.js';
import { waitForApplied } from './intent-wait.js';
import { TransferCancelledError } from './transfer-errors.js';
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
