import { pendingPlanned } from './planned-record.js';
import { ABANDONED_TOTAL, type OwnershipState } from './ownership.js';
import { abandonedKey } from './ownership-index.js';
import { sameMove } from './transfer-requests.js';
import { transferCoreInvariants } from './transfer-core.js';
import type { TransferPlan } from './transfer-plan.js';

/**
 * What must hold of planned transfers whatever the network, the clocks and the operators did,
 * written beside the code it constrains so a change to the lifecycle meets them at once. The
 * simulations check them after every step; nothing in a request handler or a watcher calls
 * them (`registrationInvariants` looks at every registration).
 *
 * Each returns the violations it found, in words, empty when everything holds.
 */

/**
 * One plan, as its driver holds it: its core's invariants (transfer-core.ts, checked by the core
 * after every step too) on the state it holds now — caught up implies frontier >= barrier,
 * committing implies finals complete, a cancel answered 204 is never followed by its commit.
 */
export function planInvariants(plan: TransferPlan): string[] {
  return transferCoreInvariants(plan.core);
}

/**
 * What a plan's core found broken after one of its steps (the simulations fail on the first):
 * unlike planInvariants, which looks at the state now, this is every step's check.
 */
export function stepViolations(plan: TransferPlan): readonly string[] {
  return plan.core.violations;
}

/**
 * The plans one member drives: at most one per authority, and no key driven for two.
 */
export function driverInvariants(plans: Iterable<TransferPlan>): string[] {
  const violations: string[] = [];
  const authorities = new Map<string, string>();
  const ids = new Map<string, string>();
  for (const plan of plans) {
    const other = authorities.get(plan.authority);
    if (other !== undefined) violations.push(`${plan.authority} has two plans, ${other} and ${plan.id}`);
    authorities.set(plan.authority, plan.id);
    const elsewhere = ids.get(plan.id);
    if (elsewhere !== undefined) violations.push(`transfer ${plan.id} is driven for both ${elsewhere} and ${plan.authority}`);
    ids.set(plan.id, plan.authority);
  }
  return violations;
}

/**
 * The replicated registrations: at most one registration per authority, filed under the
 * authority it moves, and no transfer id registered for two authorities; a registration whose
 * move committed is gone (its sealed record is pending or stored, never beside it); a key called
 * off is registered again only for its own move; the abandoned keys stay within their bound.
 */
export function registrationInvariants(state: OwnershipState): string[] {
  const violations: string[] = [];
  const ids = new Map<string, string>();
  for (const [authority, intent] of state.transfers.entries()) {
    if (intent.authority !== authority) {
      violations.push(`transfer ${intent.id} of ${intent.authority} is registered under ${authority}`);
    }
    const other = ids.get(intent.id);
    if (other !== undefined) violations.push(`transfer ${intent.id} is registered for both ${other} and ${authority}`);
    ids.set(intent.id, authority);
    // A committed key registers nothing again (the state machine answers it with its record).
    const sealed = pendingPlanned(state, intent.id);
    if (sealed) violations.push(`transfer ${intent.id} committed ${sealed.authority} at epoch ${sealed.epoch} and is still registered`);
    // A key called off registers only the move it named again.
    const abandoned = abandonedKey(state, intent.id);
    if (abandoned && !sameMove(abandoned, intent)) {
      violations.push(`transfer ${intent.id} is registered for ${intent.authority} ${intent.source}->${intent.target}, but it was called off as ${abandoned.authority} ${abandoned.source}->${abandoned.target}`);
    }
  }
  if (state.abandoned.size > ABANDONED_TOTAL) violations.push(`${state.abandoned.size} abandoned keys are kept, over the bound of ${ABANDONED_TOTAL}`);
  return violations;
}
