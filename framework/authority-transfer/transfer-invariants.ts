import { pendingPlanned } from './planned-record.js';
import { ABANDONED_TOTAL, type OwnershipState } from './ownership.js';
import { abandonedKey } from './ownership-index.js';
import { sameMove } from './transfer-requests.js';
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
 * One plan, as its driver holds it:
 * - caught up implies frontier >= barrier: a plan Ready or Committing has, on every source feed,
 *   a reading of the target at or past what it must apply (the barrier, or the final serial
 *   once frozen);
 * - committing implies finals complete: a plan claims only while it holds a freeze with every
 *   source member's final serial recorded, so the commit it proposes can be accepted.
 */
export function planInvariants(plan: TransferPlan): string[] {
  const violations: string[] = [];
  if (plan.state === 'Ready' || plan.state === 'Committing') {
    for (const cursor of plan.cursors) {
      if (cursor.frontier === undefined || cursor.frontier < cursor.barrier) {
        violations.push(
          `transfer ${plan.id} is ${plan.state} while the target holds ${cursor.origin.member}'s feed through ${cursor.frontier ?? 'nothing read'}, short of ${cursor.barrier}`,
        );
      }
    }
  }
  if (plan.state === 'Committing' && !plan.frozen) {
    violations.push(`transfer ${plan.id} is Committing without a freeze holding every final serial`);
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
