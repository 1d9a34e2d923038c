import { AbandonedWindow } from './abandoned-window.js';
import type { TransferPlan } from './transfer-plan.js';

/**
 * The transfers in flight, one per authority. A resolved plan leaves it, so its size is the
 * number of moves under way, not the number ever made; what outlives a run is the durable audit
 * and the window of recently abandoned authorities.
 */
export class PlanRegistry {
  private readonly plans = new Map<string, TransferPlan>();
  readonly abandoned: AbandonedWindow;
  /**
   * What the cores of this member's plans found broken after a step (the first few), kept past
   * the plan's run: the simulations fail on the first.
   */
  readonly violations: string[] = [];

  constructor(abandonedCapacity = 256) {
    this.abandoned = new AbandonedWindow(abandonedCapacity);
  }

  get(authority: string): TransferPlan | undefined {
    return this.plans.get(authority);
  }

  /**
   * Registers a plan; the caller checked that none runs for the authority. The authority's
   * abandoned entry stays until the new transfer is registered in the replicated state (or
   * commits): a request refused before that (a wrong source, say) must not make a repeated
   * cancel of the abandoned one answer for an older, committed transfer.
   */
  register(plan: TransferPlan): void {
    const existing = this.plans.get(plan.authority);
    if (existing && existing !== plan) {
      throw new Error(`registry already holds transfer ${existing.id} for ${plan.authority}`);
    }
    this.plans.set(plan.authority, plan);
  }

  /** The plan reached an outcome other than abandonment: it leaves the registry. */
  resolve(plan: TransferPlan): void {
    if (this.plans.get(plan.authority) === plan) this.plans.delete(plan.authority);
  }

  /** The plan was cancelled or timed out: it leaves the registry and enters the window. */
  abandon(plan: TransferPlan): void {
    if (this.plans.get(plan.authority) === plan) this.plans.delete(plan.authority);
    this.abandoned.remember(plan.authority, plan.id, plan.request);
  }

  get size(): number {
    return this.plans.size;
  }

  all(): IterableIterator<TransferPlan> {
    return this.plans.values();
  }
}
