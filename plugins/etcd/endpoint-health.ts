import { GRPCDeadlineExceededError, type IOptions } from 'etcd3';
import type { Clock } from '@baton/contracts';
import { certainlyNotSent } from './etcd-errors.js';

type HostPolicy = ReturnType<NonNullable<NonNullable<IOptions['faultHandling']>['host']>>;

/** Where one client's requests went, per etcd endpoint (for tests and diagnosis). */
export interface EndpointStats {
  endpoint: string;
  /** Requests handed to this endpoint (skipped ones not counted). */
  calls: number;
  /** Requests that ran out of time against it: the answer never came. */
  timeouts: number;
  /** Requests sent to another endpoint instead, because this one was avoided. */
  skipped: number;
  /** Why requests avoid it right now, if they do. */
  avoided?: 'unreachable' | 'suspect';
}

export interface EndpointHealthSettings {
  /** How long an endpoint that refused a connection is skipped. */
  unreachableMs: number;
  /** How long an endpoint that let a request time out is avoided while another one serves. */
  suspectMs: number;
}

interface EndpointState {
  stats: EndpointStats;
  unreachableUntil: number;
  suspectUntil: number;
}

/** Raised instead of calling an avoided endpoint: nothing was sent, so the pool tries the next. */
export class EndpointSkippedError extends Error {
  override readonly name = 'EndpointSkippedError';
}

/**
 * What one etcd client knows about its endpoints, shared by the per-host policies etcd3 asks for
 * (`faultHandling.host`), so the pool's own host rotation moves off a bad endpoint:
 * - an endpoint that refused a connection is skipped for `unreachableMs` (nothing is lost: the
 *   refusal was immediate);
 * - an endpoint that let a request run out of time (a frozen or cut-off member keeps its TCP
 *   connection open and answers nothing) is avoided for `suspectMs`, because every request sent
 *   there costs its caller a whole deadline. Only while another endpoint is not avoided: with all
 *   of them in doubt (etcd as a whole stalled), requests go out as usual rather than failing.
 * An endpoint that answers is trusted again at once. The suspicion changes where the next
 * request goes, never what a failed one means: whether it can have been applied is decided by
 * the caller from the error alone (certainlyNotSent), as before.
 */
export class EndpointHealth {
  private readonly endpoints = new Map<string, EndpointState>();

  constructor(
    endpoints: readonly string[],
    private readonly clock: Clock,
    private readonly settings: EndpointHealthSettings,
  ) {
    for (const endpoint of endpoints) {
      this.endpoints.set(endpoint, {
        stats: { endpoint, calls: 0, timeouts: 0, skipped: 0 },
        unreachableUntil: 0,
        suspectUntil: 0,
      });
    }
  }

  /** The cockatiel-shaped policy etcd3 runs each request to `endpoint` through. */
  policyFor(endpoint: string): HostPolicy {
    const state = this.endpoints.get(endpoint);
    if (!state) throw new Error(`etcd endpoint ${endpoint} is not one of this client's endpoints`);
    const policy = {
      execute: async <T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T) => {
        const avoided = this.avoidance(state, this.clock.now());
        if (avoided) {
          state.stats.skipped++;
          // "No connection established" keeps certainlyNotSent true when every endpoint is skipped.
          throw new EndpointSkippedError(
            avoided === 'unreachable'
              ? 'No connection established: host skipped after a connection failure'
              : 'No connection established: host skipped after a request to it timed out',
          );
        }
        state.stats.calls++;
        try {
          const result = await fn({ signal: new AbortController().signal });
          state.unreachableUntil = 0;
          state.suspectUntil = 0;
          return result;
        } catch (error) {
          this.recordFailure(state, error);
          throw error;
        }
      },
    };
    return policy as unknown as HostPolicy;
  }

  /** A copy of every endpoint's counters, in the order the endpoints were given. */
  stats(): EndpointStats[] {
    const now = this.clock.now();
    return [...this.endpoints.values()].map((state) => {
      const avoided = this.avoidedAt(state, now);
      return avoided ? { ...state.stats, avoided } : { ...state.stats };
    });
  }

  private recordFailure(state: EndpointState, error: unknown): void {
    const now = this.clock.now();
    if (timedOutThere(error)) {
      // A deadline that passed while connecting counts here too: connecting to a frozen member
      // hangs just as long as a request sent to it.
      state.stats.timeouts++;
      state.suspectUntil = now + this.settings.suspectMs;
    } else if (certainlyNotSent(error)) {
      state.unreachableUntil = now + this.settings.unreachableMs;
    }
  }

  /** Why a request should not go to `state` now: refused moments ago, or suspect while another serves. */
  private avoidance(state: EndpointState, now: number): EndpointStats['avoided'] {
    const avoided = this.avoidedAt(state, now);
    if (avoided !== 'suspect') return avoided;
    for (const other of this.endpoints.values()) {
      if (other !== state && this.avoidedAt(other, now) === undefined) return 'suspect';
    }
    return undefined;
  }

  private avoidedAt(state: EndpointState, now: number): EndpointStats['avoided'] {
    if (now < state.unreachableUntil) return 'unreachable';
    if (now < state.suspectUntil) return 'suspect';
    return undefined;
  }
}

/**
 * The endpoint took the request's whole deadline, or said itself that it could not get it
 * committed in time (a member cut off from its quorum): either way the next request should try
 * another member.
 */
function timedOutThere(error: unknown): boolean {
  return (
    error instanceof GRPCDeadlineExceededError ||
    (error instanceof Error && error.message.includes('etcdserver: request timed out'))
  );
}
