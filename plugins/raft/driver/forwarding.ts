import {
  type Clock,
  NotAppendedError,
  OutcomeUnknownError,
  type LogPosition,
  type NotAppendedReason,
  type OutcomeUnknownReason,
  type Receipt,
  PeerUnreachableError,
  type MemberId,
  type PeerMessage,
  type PeerTransport,
} from '@baton/contracts';
import { valueDepthExceeds, childSpan } from '@baton/http';
import { SpanKind } from '@opentelemetry/api';
import { commandFingerprint } from '@baton/consensus';
import {
  MAX_COMMAND_DEPTH,
  PROPOSE_CHANNEL,
  proposeRequestSchema,
  type ProposeRequest,
  type ProposeResponse,
} from './wire.js';

/**
 * The follower side of forwarding: sends a proposal or membership change to the leader on the
 * "raft-propose" channel and waits for its answer, bounded by our own timer. Requests still
 * open when the member stops are aborted together.
 */
export class Forwarder {
  private readonly open = new Set<AbortController>();

  /**
   * @param graceMs how long past the request's own timeout we still wait (one tick), so the
   *   transport's timeout, not ours, normally ends a request.
   * @param running whether the member still runs: a request cut short by a stop says so.
   */
  constructor(
    private readonly transport: PeerTransport,
    private readonly clock: Clock,
    private readonly graceMs: number,
    private readonly running: () => boolean,
  ) {}

  async request(
    leader: MemberId,
    body: ProposeRequest,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<ProposeResponse> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    this.open.add(controller);
    // Our own bound on the wait: a transport whose process died may never answer at all.
    const guard = new Promise<never>((_, reject) => {
      const fail = () => reject(controller.signal.reason ?? new Error('aborted'));
      if (controller.signal.aborted) fail();
      controller.signal.addEventListener('abort', fail, { once: true });
    });
    guard.catch(() => undefined);
    const timer = this.clock.setTimer(timeoutMs + this.graceMs, () =>
      controller.abort(new Error(`no answer within ${timeoutMs} ms`)),
    );
    try {
      // A span of the traced request that proposed (none outside one): the wait for the leader's answer.
      const answer = await childSpan(
        `raft forward ${body.kind === 'conf' ? 'membership change' : 'proposal'}`,
        { 'baton.leader': leader },
        () =>
          Promise.race([
            this.transport.request(leader, { channel: PROPOSE_CHANNEL, body }, { timeoutMs, signal: controller.signal }),
            guard,
          ]),
        SpanKind.INTERNAL,
      );
      return answer.body as ProposeResponse;
    } catch (error) {
      // It never reached the member we took for the leader (it is down: nothing listens there):
      // nothing was appended, so the caller waits for a new leader and asks it instead.
      if (error instanceof PeerUnreachableError && error.notSent && !signal?.aborted && this.running()) {
        return { ok: false, kind: 'not_appended', reason: 'no_leader', message: error.message };
      }
      // It may have reached the leader and been appended: only a retry with the key can tell.
      const reason: OutcomeUnknownReason = !this.running()
        ? 'stopped'
        : signal?.aborted
          ? 'aborted'
          : 'timeout';
      throw new OutcomeUnknownError(
        reason,
        `forwarded to leader ${leader}, no answer: ${(error as Error).message}`,
      );
    } finally {
      timer.cancel();
      signal?.removeEventListener('abort', onAbort);
      this.open.delete(controller);
    }
  }

  /** Aborts every request still waiting for the leader (the member stops). */
  abortAll(reason: Error): void {
    for (const c of this.open) c.abort(reason);
  }
}

/** A forwarded command deeper than this is refused (the same bound as a local proposal's). */
const MAX_FORWARDED_DEPTH = MAX_COMMAND_DEPTH;

/** What the leader side of forwarding needs from the driver. */
export interface ForwardedProposalsHost {
  readonly self: MemberId;
  readonly cluster: string;
  /** Never more than this long on the leader, whatever the follower asked for. */
  readonly maxTimeoutMs: number;
  readonly stats: { malformedMessages: number; foreignMessages: number };
  readonly clock: Clock;
  /** Running and leading: only then is a forwarded proposal taken. */
  leading(): boolean;
  appliedPosition(): LogPosition;
  proposeHere(
    data: { command: unknown; key?: string; fingerprint?: string },
    now: number,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<Receipt<unknown> | 'retry'>;
  changeHere(
    change: 'add' | 'remove',
    member: MemberId,
    timeoutMs: number,
    expectedVoters?: readonly MemberId[],
  ): Promise<'done' | 'retry'>;
}

/**
 * The leader side of forwarding: checks a forwarded proposal or membership change, runs it
 * here, and answers with the receipt or the error a follower turns back into the same error.
 */
export class ForwardedProposals {
  constructor(private readonly host: ForwardedProposalsHost) {}

  async answer(from: MemberId, message: PeerMessage): Promise<PeerMessage> {
    const host = this.host;
    const reply = (body: ProposeResponse): PeerMessage => ({ channel: PROPOSE_CHANNEL, body });
    const parsed = proposeRequestSchema.safeParse(message.body);
    if (!parsed.success || parsed.data.cluster !== host.cluster) {
      if (parsed.success) host.stats.foreignMessages++;
      else host.stats.malformedMessages++;
      return reply({
        ok: false,
        kind: 'not_appended',
        reason: 'no_leader',
        message: `malformed or foreign proposal from ${from}`,
      });
    }
    const req = parsed.data;
    if (!host.leading()) {
      return reply({
        ok: false,
        kind: 'not_appended',
        reason: 'no_leader',
        message: `${host.self} is not the leader`,
      });
    }
    const timeoutMs = Math.min(req.timeoutMs, host.maxTimeoutMs);
    if (req.kind !== 'conf' && valueDepthExceeds(req.command, MAX_FORWARDED_DEPTH)) {
      host.stats.malformedMessages++;
      return reply({ ok: false, kind: 'not_appended', reason: 'invalid_command', message: `the command from ${from} nests deeper than ${MAX_FORWARDED_DEPTH} levels` });
    }
    try {
      if (req.kind === 'conf') {
        await host.changeHere(req.change, req.member, timeoutMs, req.expectedVoters);
        return reply({
          ok: true,
          position: { ...host.appliedPosition() },
          result: null,
          replayed: false,
        });
      }
      const fingerprint = req.key === undefined ? undefined : commandFingerprint(req.command);
      const outcome = await host.proposeHere(
        { command: req.command, key: req.key, fingerprint },
        host.clock.now(),
        timeoutMs,
        undefined,
      );
      if (outcome === 'retry')
        return reply({
          ok: false,
          kind: 'not_appended',
          reason: 'no_leader',
          message: `${host.self} stopped leading before appending`,
        });
      return reply({
        ok: true,
        position: outcome.position,
        result: outcome.result,
        replayed: outcome.replayed,
      });
    } catch (error) {
      if (error instanceof NotAppendedError)
        return reply({
          ok: false,
          kind: 'not_appended',
          reason: error.reason,
          message: error.message,
        });
      if (error instanceof OutcomeUnknownError)
        return reply({
          ok: false,
          kind: 'outcome_unknown',
          reason: error.reason,
          message: error.message,
        });
      throw error;
    }
  }
}

/** The error a follower raises for the leader's refusal, the same the leader would have thrown. */
export function responseError(response: Extract<ProposeResponse, { ok: false }>): Error {
  if (response.kind === 'not_appended')
    return new NotAppendedError(response.reason as NotAppendedReason, response.message);
  return new OutcomeUnknownError(response.reason as OutcomeUnknownReason, response.message);
}
