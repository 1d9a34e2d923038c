import { putOwnership } from './ownership-index.js';
import type { Ownership, OwnershipState, SetAuthorityPlacementCommand, SetAuthorityPlacementResult } from './ownership.js';

/** Datacenters an authority's allowedHomes may list at most. */
export const MAX_ALLOWED_HOMES = 64;

/**
 * Where an authority may live: `allowedHomes` bounds the targets of its planned transfers (a
 * registration elsewhere is refused, target_not_allowed), and `preferredHome` names the home its
 * operators would rather have (it must be allowed). A failover (the raw command) is not bound:
 * when the home is lost, the authority must be able to go wherever it can be served.
 */
export function setAuthorityPlacement(state: OwnershipState, c: SetAuthorityPlacementCommand): SetAuthorityPlacementResult {
  const current = state.authorities.get(c.authority);
  if (!current) return { ok: false, reason: 'unknown_authority' };
  const allowed = Array.isArray(c.allowedHomes) ? [...new Set(c.allowedHomes.filter((h) => typeof h === 'string' && h.length > 0))] : null;
  const preferred = typeof c.preferredHome === 'string' && c.preferredHome.length > 0 ? c.preferredHome : null;
  if ((allowed && (allowed.length === 0 || allowed.length > MAX_ALLOWED_HOMES)) || (preferred && allowed && !allowed.includes(preferred))) {
    return { ok: false, reason: 'invalid_placement' };
  }
  const { allowedHomes: _a, preferredHome: _p, ...rest } = current;
  const next: Ownership = { ...rest, ...(allowed ? { allowedHomes: allowed.sort() } : {}), ...(preferred ? { preferredHome: preferred } : {}) };
  putOwnership(state, c.authority, next);
  return { ok: true, authority: c.authority, home: next.home, epoch: next.epoch, allowedHomes: next.allowedHomes ?? null, preferredHome: next.preferredHome ?? null };
}

/** Whether a planned transfer of an authority with this record may go to `target`. */
export function homeAllowed(ownership: Ownership, target: string): boolean {
  return !ownership.allowedHomes || ownership.allowedHomes.includes(target);
}
