import { sortedTree, type TrailChain } from '@baton/consensus';
import {
  ABANDONED_PER_AUTHORITY,
  ABANDONED_TOTAL,
  unsettled,
  type AbandonedTransfer,
  type Ownership,
  type OwnershipState,
  type PendingAudit,
  type TransferIntent,
} from './ownership.js';

/** An empty ownership state, indexes included. */
export function emptyOwnershipState(): OwnershipState {
  return {
    authorities: sortedTree(),
    pending: sortedTree(),
    chains: sortedTree(),
    transfers: sortedTree(),
    abandoned: sortedTree(),
    abandonedTracked: true,
    pendingByAuthority: new Map(),
    transfersBySource: new Map(),
    transfersByTarget: new Map(),
    transfersByDriver: new Map(),
    transfersById: new Map(),
    unsettledByHome: new Map(),
    abandonedById: new Map(),
    abandonedByAuthority: new Map(),
  };
}

function add(index: Map<string, Set<string>>, key: string, value: string): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(value);
}

function remove(index: Map<string, Set<string>>, key: string, value: string): void {
  const set = index.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) index.delete(key);
}

/** Keeps `unsettledByHome` when the authority's record goes from `previous` to `next` (O(1)). */
export function indexOwnership(state: OwnershipState, authority: string, previous: Ownership | undefined, next: Ownership | undefined): void {
  if (unsettled(previous)) remove(state.unsettledByHome, previous!.home, authority);
  if (unsettled(next)) add(state.unsettledByHome, next!.home, authority);
}

/** Sets the authority's record (a new one: never changed in place), keeping its index. */
export function putOwnership(state: OwnershipState, authority: string, ownership: Ownership): void {
  indexOwnership(state, authority, state.authorities.get(authority), ownership);
  state.authorities.set(authority, ownership);
}

/** The authorities whose move to `home` some member of it may still have to settle. */
export function unsettledAt(state: OwnershipState, home: string): ReadonlySet<string> {
  return state.unsettledByHome.get(home) ?? new Set();
}

/**
 * Registers the authority's intent, or replaces it with a changed copy (records are never
 * changed in place: a capture may share the old one), keeping the by-source/target/driver indexes.
 */
export function putIntent(state: OwnershipState, intent: TransferIntent): void {
  const previous = state.transfers.get(intent.authority);
  if (previous) dropIntent(state, intent.authority);
  state.transfers.set(intent.authority, intent);
  add(state.transfersBySource, intent.source, intent.authority);
  add(state.transfersByTarget, intent.target, intent.authority);
  add(state.transfersByDriver, intent.driver, intent.authority);
  state.transfersById.set(intent.id, intent.authority);
}

export function dropIntent(state: OwnershipState, authority: string): TransferIntent | undefined {
  const intent = state.transfers.get(authority);
  if (!intent) return undefined;
  state.transfers.delete(authority);
  remove(state.transfersBySource, intent.source, authority);
  remove(state.transfersByTarget, intent.target, authority);
  remove(state.transfersByDriver, intent.driver, authority);
  if (state.transfersById.get(intent.id) === authority) state.transfersById.delete(intent.id);
  return intent;
}

/**
 * Files a transfer released without its commit, evicting past the bounds: the authority's oldest
 * entry beyond ABANDONED_PER_AUTHORITY, then the oldest overall beyond ABANDONED_TOTAL (O(log n)).
 * The same key released again (its move reissued, then called off again) keeps only the newer.
 */
export function putAbandoned(state: OwnershipState, given: AbandonedTransfer): void {
  if (!state.abandonedTracked) return;
  const previous = state.abandonedById.get(given.id);
  if (previous !== undefined) dropAbandoned(state, previous);
  // Log indexes only grow, so this is the release's own index; a log that repeated one would
  // otherwise overwrite an entry the indexes still point at.
  const newest = state.abandoned.maxKey();
  const entry = newest !== undefined && given.released <= newest ? { ...given, released: newest + 1 } : given;
  state.abandoned.set(entry.released, entry);
  state.abandonedById.set(entry.id, entry.released);
  let releases = state.abandonedByAuthority.get(entry.authority);
  if (!releases) state.abandonedByAuthority.set(entry.authority, (releases = []));
  releases.push(entry.released);
  while (releases.length > ABANDONED_PER_AUTHORITY) dropAbandoned(state, releases[0]!);
  while (state.abandoned.size > ABANDONED_TOTAL) dropAbandoned(state, state.abandoned.minKey()!);
}

export function dropAbandoned(state: OwnershipState, released: number): void {
  const entry = state.abandoned.get(released);
  if (!entry) return;
  state.abandoned.delete(released);
  if (state.abandonedById.get(entry.id) === released) state.abandonedById.delete(entry.id);
  const releases = state.abandonedByAuthority.get(entry.authority);
  if (!releases) return;
  const at = releases.indexOf(released);
  if (at >= 0) releases.splice(at, 1);
  if (releases.length === 0) state.abandonedByAuthority.delete(entry.authority);
}

/** What the replicated state remembers of an abandoned key, if it still does. */
export function abandonedKey(state: OwnershipState, id: string): AbandonedTransfer | undefined {
  const released = state.abandonedById.get(id);
  return released === undefined ? undefined : state.abandoned.get(released);
}

/** The authority's latest abandoned transfer, unless a move of it committed since. */
export function latestAbandoned(state: OwnershipState, authority: string): AbandonedTransfer | undefined {
  const releases = state.abandonedByAuthority.get(authority);
  const latest = releases && state.abandoned.get(releases[releases.length - 1]!);
  return latest && !latest.superseded ? latest : undefined;
}

/** A move of the authority committed: its latest abandoned transfer is no longer what a cancel answers for. */
export function supersedeAbandoned(state: OwnershipState, authority: string): void {
  const releases = state.abandonedByAuthority.get(authority);
  if (!releases) return;
  const released = releases[releases.length - 1]!;
  const latest = state.abandoned.get(released);
  // Replaced, not changed in place: a capture in progress may share the record.
  if (latest && !latest.superseded) state.abandoned.set(released, { ...latest, superseded: true });
}

/** Adds a sealed record, or replaces it with a changed copy (never changed in place). */
export function putPending(state: OwnershipState, pending: PendingAudit): void {
  // A record under the same id for another authority leaves that authority's index too.
  const previous = state.pending.get(pending.record.id);
  if (previous && previous.record.authority !== pending.record.authority) remove(state.pendingByAuthority, previous.record.authority, previous.record.id);
  state.pending.set(pending.record.id, pending);
  add(state.pendingByAuthority, pending.record.authority, pending.record.id);
}

export function dropPending(state: OwnershipState, id: string): void {
  const pending = state.pending.get(id);
  if (!pending) return;
  state.pending.delete(id);
  remove(state.pendingByAuthority, pending.record.authority, id);
}

/** The intents of `index` under `key` (an empty list when none). */
export function intentsOf(state: OwnershipState, index: Map<string, Set<string>>, key: string): TransferIntent[] {
  const authorities = index.get(key);
  if (!authorities) return [];
  const intents: TransferIntent[] = [];
  for (const authority of authorities) {
    const intent = state.transfers.get(authority);
    if (intent) intents.push(intent);
  }
  return intents;
}

/** What snapshots carry: the primary maps as entry arrays (plain JSON); indexes are rebuilt. */
export interface OwnershipSnapshot {
  authorities: [string, Ownership][];
  pending: [string, PendingAudit][];
  /** Absent from a snapshot taken before raw moves were sealed (no trail chained then). */
  chains?: [string, TrailChain][];
  transfers: [string, TransferIntent][];
  /** Absent from a snapshot taken before abandoned keys were replicated (then not tracked yet). */
  abandoned?: [number, AbandonedTransfer][];
  abandonedTracked?: boolean;
}

export function snapshotOwnership(state: OwnershipState): OwnershipSnapshot {
  return structuredClone({
    authorities: [...state.authorities],
    pending: [...state.pending],
    chains: [...state.chains],
    transfers: [...state.transfers],
    abandoned: [...state.abandoned],
    abandonedTracked: state.abandonedTracked,
  });
}

/**
 * Rebuilds the state and its indexes from a snapshot. Also reads the older object form
 * ({authorities: {...}, pending: {...}}) a snapshot taken before transfers were registered has.
 */
export function restoreOwnership(snapshot: unknown): OwnershipState {
  const s = snapshot as Record<string, unknown> | null;
  if (!s || typeof s !== 'object' || typeof s.authorities !== 'object' || s.authorities === null || typeof s.pending !== 'object' || s.pending === null) {
    throw new TypeError('ownership snapshot is malformed: expected {authorities, pending, transfers}');
  }
  const entries = <T>(value: unknown): [string, T][] =>
    Array.isArray(value) ? (value as [string, T][]) : Object.entries((value ?? {}) as Record<string, T>);
  const copy = structuredClone(s);
  const state = emptyOwnershipState();
  for (const [authority, ownership] of entries<Ownership>(copy.authorities)) putOwnership(state, authority, ownership);
  for (const [, pending] of entries<PendingAudit>(copy.pending)) putPending(state, pending);
  for (const [, intent] of entries<TransferIntent>(copy.transfers)) putIntent(state, intent);
  for (const [authority, chain] of entries<TrailChain>(copy.chains)) state.chains.set(authority, chain);
  state.abandonedTracked = copy.abandonedTracked === true;
  // In release order, so the bounds evict as they did when the releases applied.
  const abandoned = Array.isArray(copy.abandoned) ? (copy.abandoned as [number, AbandonedTransfer][]).map(([, entry]) => entry) : [];
  for (const entry of abandoned.sort((a, b) => a.released - b.released)) putAbandoned(state, entry);
  return state;
}
