import type { Clock, LogPosition } from '@baton/contracts';
import type { OwnershipConsensus } from './audit-projection.js';
import type { MemberTracker } from './member-tracker.js';
import type { TransferAuthorityResult } from './ownership.js';
import type { Roster } from './roster.js';
import { EpochPreconditionFailedError, epochRefusal } from './epoch-precondition.js';
import { InvalidTransferRequestError, MoveRefusedError, SourceNotDeadError } from './transfer-errors.js';
import { readFailoverLoss, type LossReading } from './failover-loss.js';
import { waitForApplied } from './intent-wait.js';

/** How long an answered move waits for this member to apply it too; past it, the answer goes anyway. */
const OWN_APPLY_WAIT_MS = 10_000;

export interface RawTransferRequest {
  id: string;
  authority: string;
  target: string;
  /** The home being failed away from; absent only to establish an authority without one. */
  source?: string;
  /** Move only while the authority is at this epoch (If-Match); decided by the state machine. */
  expectedEpoch?: number;
  /** The authenticated principal that asked, and why: sealed into the move's record. */
  actor?: string;
  reason?: string;
}

export interface RawTransferOutcome {
  id: string;
  authority: string;
  source: string | null;
  home: string;
  epoch: number;
  commit_term: number;
  commit_index: number;
  /** The id of the record the move sealed (`<commit_index>-0`). */
  audit_id: string;
  replayed: boolean;
}

/** What a failover reads its loss report from, and the clock that dates its record. */
export interface FailoverObservation {
  clock: Clock;
  /** Absent: a failover seals no loss report (its record says so by carrying none). */
  loss?: LossReading;
}

/**
 * The raw transfer_authority command (POST /availability/v1/commands): the unconditional move a
 * failover commits, with no catch-up gate. Its record is sealed by the state machine like a
 * planned transfer's, and a failover's carries the loss report this member reads first. Guarded
 * so it is not a back door around the planned path: the source must be the current home and the
 * tracker must call it Dead.
 * An authority without a home is established by it (no source). The target must be a
 * datacenter of the roster: a home no member serves would take no write and hold no feed.
 */
export class FailoverCommands {
  constructor(
    private readonly consensus: OwnershipConsensus,
    private readonly tracker: MemberTracker,
    private readonly roster: Roster,
    private readonly observation?: FailoverObservation,
  ) {}

  async transfer(request: RawTransferRequest): Promise<RawTransferOutcome> {
    const current = this.consensus.view().state.authorities.get(request.authority);
    if (request.source === request.target) {
      throw new InvalidTransferRequestError(`source and target are both ${request.target}`);
    }
    if (this.roster.membersOf(request.target).length === 0) {
      throw new InvalidTransferRequestError(
        `${request.target} is no datacenter of the roster: choose ${this.roster.datacenters().join(', ')}`,
      );
    }
    if (current && request.source === undefined && current.home !== request.target) {
      throw new InvalidTransferRequestError(
        `${request.authority} lives in ${current.home}: name it as source to fail it over`,
      );
    }
    // Already at the target: either this very command committed before (the same key replays
    // its decision) or another did, which the state machine refuses. Consensus tells which.
    const maybeRetry = current !== undefined && current.home === request.target;
    if (request.expectedEpoch !== undefined && !maybeRetry && epochRefusal(current, request.expectedEpoch)) {
      throw new EpochPreconditionFailedError(request.authority, request.expectedEpoch, current?.home, current?.epoch);
    }
    if (request.source !== undefined && !maybeRetry) {
      if (current?.home !== request.source) {
        throw new MoveRefusedError(request.authority, 'source_not_home', `its home is ${current?.home ?? 'none'}, not ${request.source}`);
      }
      const state = this.tracker.datacenterState(request.source);
      if (state !== 'Dead') throw new SourceNotDeadError(request.source, state);
    }
    // A failover names its source: read what the move loses before proposing it. A retry of one
    // already committed reads nothing (it replays the first decision and that record's report);
    // the report and the time are left out of the fingerprint, so a retry elsewhere replays too.
    const failover = request.source !== undefined;
    const loss =
      failover && !maybeRetry && this.observation?.loss
        ? await readFailoverLoss(request.authority, this.roster.membersOf(request.source!).map((m) => m.id), request.target, this.observation.loss)
        : undefined;
    const at = this.observation ? Math.max(0, Math.floor(this.observation.clock.now())) : undefined;
    const receipt = await this.consensus.propose(
      {
        type: 'transfer_authority',
        authority: request.authority,
        target: request.target,
        expectedSource: request.source,
        ...(request.expectedEpoch === undefined ? {} : { expectedEpoch: request.expectedEpoch }),
        ...(request.actor === undefined ? {} : { actor: request.actor }),
        ...(request.reason === undefined ? {} : { reason: request.reason }),
        ...(failover ? { failover: true as const } : {}),
        ...(at === undefined && loss === undefined ? {} : { observed: { ...(at === undefined ? {} : { at }), ...(loss ? { loss } : {}) } }),
      },
      { idempotencyKey: request.id },
    );
    const result = receipt.result as TransferAuthorityResult;
    if (!result.ok && result.reason === 'precondition_failed') {
      throw new EpochPreconditionFailedError(request.authority, request.expectedEpoch ?? 0, result.home, result.epoch);
    }
    if (!result.ok) {
      throw new MoveRefusedError(request.authority, result.reason, `the ownership state refused the move (home ${result.home ?? 'none'})`);
    }
    // The leader answers a forwarded proposal once it applied it, which may be before this member
    // has: the answer waits for this member's own apply, so a write or a read here right after
    // it sees the new home (a committed move is answered as such even if that wait runs out).
    if (this.observation) {
      const clock = this.observation.clock;
      await waitForApplied(this.consensus, clock, receipt.position.index, { until: clock.now() + OWN_APPLY_WAIT_MS });
    }
    return outcome(request, result, receipt.position, receipt.replayed);
  }
}

function outcome(
  request: RawTransferRequest,
  result: Extract<TransferAuthorityResult, { ok: true }>,
  position: LogPosition,
  replayed: boolean,
): RawTransferOutcome {
  return {
    id: request.id,
    authority: result.authority,
    source: result.source ?? null,
    home: result.home,
    epoch: result.epoch,
    commit_term: position.term,
    commit_index: position.index,
    audit_id: result.record.id,
    replayed,
  };
}
