import type { HardState, Ready } from './types.js';

/**
 * Whether a Ready must be written and synced before anything that depends on it (etcd's
 * MustSync): when it carries entries or a snapshot, or changes term or vote. A Ready that only
 * moves the commit index need not be: a commit index is never needed for safety (a member that
 * restarts with an older one learns the newer from the leader), so its hard state can wait for
 * the next write that must be synced, instead of costing an fsync of its own before the
 * entries it committed are applied and answered.
 *
 * @internal
 */
export function mustSync(rd: Ready, durable: HardState): boolean {
  if (rd.entries.length > 0 || rd.snapshot) return true;
  const hs = rd.hardState;
  return hs !== undefined && (hs.term !== durable.term || hs.vote !== durable.vote);
}
