import { pendingPlanned } from './planned-record.js';
import type { ApplyContext } from '@baton/contracts';
import type {
  OwnershipState,
  RegisterTransferCommand,
  RegisterTransferResult,
  TransferIntent,
  TransferLifecycleCommand,
  TransferLifecycleResult,
} from './ownership.js';
import { epochRefusal } from './epoch-precondition.js';
import { abandonedKey, dropIntent, putAbandoned, putIntent } from './ownership-index.js';
import { homeAllowed } from './authority-placement.js';

/**
 * The lifecycle of a registered planned transfer, as the replicated state owns it:
 * register (one per authority, cluster-wide) -> freeze (the source members stop acknowledging
 * writes) -> each source member records its final serial -> commit (ownership-state-machine)
 * or thaw (back to catching up, the finals as barriers) or release (cancelled, timed out,
 * expired). Every step names the transfer id, so a late command of an earlier transfer
 * changes nothing.
 */
export function applyTransferLifecycle(
  state: OwnershipState,
  c: TransferLifecycleCommand,
  ctx: ApplyContext,
): RegisterTransferResult | TransferLifecycleResult {
  if (c.type === 'register_transfer') return register(state, c, ctx);
  const registered = state.transfers.get(c.authority);
  if (!registered || (c.type !== 'release_transfer' && registered.id !== c.id) || (c.type === 'release_transfer' && c.id !== undefined && registered.id !== c.id)) {
    return { ok: false, reason: 'not_registered' };
  }
  if (c.type === 'release_transfer') {
    if (c.driver !== undefined && registered.driver !== c.driver) return { ok: false, reason: 'not_registered' };
    dropIntent(state, c.authority);
    const { id, authority, source, target, reason } = registered;
    putAbandoned(state, { id, authority, source, target, reason, why: c.why, released: ctx.position.index });
    return { ok: true, intent: copy(registered) };
  }
  // The registered record may be shared with a capture in progress: the step changes a copy,
  // which replaces it.
  const intent = copy(registered);
  switch (c.type) {
    case 'freeze_transfer':
      if (!intent.frozen) {
        intent.frozen = true;
        intent.freezes += 1;
        intent.thawBy = c.thawBy;
        for (const cursor of intent.sources) delete cursor.final;
      }
      break;
    case 'record_final': {
      if (!intent.frozen || intent.freezes !== c.freeze) return { ok: false, reason: 'not_frozen' };
      const cursor = intent.sources.find((s) => s.member === c.member);
      if (!cursor) return { ok: false, reason: 'not_a_source' };
      // A member that lost its feed names its new incarnation; within one, a later final only grows.
      if (cursor.incarnation !== c.incarnation) {
        cursor.incarnation = c.incarnation;
        cursor.barrier = 0;
        cursor.final = c.serial;
      } else {
        cursor.final = Math.max(cursor.final ?? 0, c.serial, cursor.barrier);
      }
      break;
    }
    case 'thaw_transfer':
      if (intent.frozen) {
        intent.frozen = false;
        delete intent.thawBy;
        for (const cursor of intent.sources) {
          if (cursor.final !== undefined) cursor.barrier = cursor.final;
          delete cursor.final;
        }
      }
      break;
  }
  putIntent(state, intent);
  return { ok: true, intent: copy(intent) };
}

function register(state: OwnershipState, c: RegisterTransferCommand, ctx: ApplyContext): RegisterTransferResult {
  const sealed = pendingPlanned(state, c.id);
  if (sealed) return { ok: false, reason: 'committed', record: { ...sealed } };
  // One key names one transfer: registered for another authority, it is that transfer's key.
  const elsewhere = state.transfersById.get(c.id);
  if (elsewhere !== undefined && elsewhere !== c.authority) return { ok: false, reason: 'key_names_another_transfer', running: copy(state.transfers.get(elsewhere)!) };
  // A key called off may be reissued for its move, never for another (whichever member asks).
  const abandoned = abandonedKey(state, c.id);
  if (abandoned && !(abandoned.authority === c.authority && abandoned.source === c.source && abandoned.target === c.target && abandoned.reason === c.reason)) {
    return { ok: false, reason: 'key_abandoned', abandoned: { ...abandoned } };
  }
  const running = state.transfers.get(c.authority);
  if (running) {
    if (running.id !== c.id) return { ok: false, reason: 'transfer_in_progress', running: running.id };
    const same = running.source === c.source && running.target === c.target && running.reason === c.reason;
    return same ? { ok: true, intent: copy(running), existing: true } : { ok: false, reason: 'key_names_another_transfer', running: copy(running) };
  }
  const home = state.authorities.get(c.authority);
  if (!home) return { ok: false, reason: 'unknown_authority' };
  const stale = epochRefusal(home, c.expectedEpoch);
  if (stale) return stale;
  if (home.home !== c.source) return { ok: false, reason: 'source_not_home', home: home.home, epoch: home.epoch };
  if (c.source === c.target) return { ok: false, reason: 'already_home', home: home.home, epoch: home.epoch };
  if (!homeAllowed(home, c.target)) return { ok: false, reason: 'target_not_allowed', home: home.home, epoch: home.epoch };
  // A new registration carries the barrier: a driver that meant to join its key's registration
  // (read from a view that still showed it) finds it released, and must read the source first.
  const sources = Array.isArray(c.sources) ? c.sources : [];
  if (sources.length === 0) return { ok: false, reason: 'barrier_unread' };
  const intent: TransferIntent = {
    id: c.id,
    authority: c.authority,
    source: c.source,
    target: c.target,
    actor: c.actor,
    reason: c.reason,
    driver: c.driver,
    sources: sources.map((s) => ({ member: s.member, incarnation: s.incarnation, barrier: s.serial })),
    deadline: c.deadline,
    frozen: false,
    freezes: 0,
    registered: ctx.position.index,
    ...(Number.isSafeInteger(c.notBefore) ? { notBefore: c.notBefore } : {}),
  };
  putIntent(state, intent);
  return { ok: true, intent: copy(intent), existing: false };
}

function copy(intent: TransferIntent): TransferIntent {
  return structuredClone(intent);
}
