/** Transfers a drain keeps in flight when the operator does not say. */
export const DEFAULT_DRAIN_IN_FLIGHT = 32;
/** Moves a rebalance keeps in flight when the operator does not say. */
export const DEFAULT_REBALANCE_IN_FLIGHT = 16;
