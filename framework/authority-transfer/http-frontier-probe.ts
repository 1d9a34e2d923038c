import type { Clock, MemberId } from '@baton/contracts';
import type { FeedOrigin } from './change-feed.js';
import type { AppliedPosition } from './feed-replicas.js';
import { datacenterFrontier, type FrontierProbe, type FrontierReading, type MemberReading, type ProbeOptions } from './frontier-probe.js';
import type { MemberTracker } from './member-tracker.js';
import { fetchPeerJson } from './peer-fetch.js';
import type { Roster } from './roster.js';

/**
 * Probes a target datacenter over HTTP: GET {public}/availability/v1/feeds/{origin}/applied on
 * every member the roster lists for it, in parallel. A member that does not answer in time, or
 * answers nonsense, has no reading, and then neither has the datacenter. A member that applied
 * another incarnation of the origin's feed (the origin lost its disk since) holds none of this
 * one: it reads 0, whatever its serial there. Each answer carries the storage id of the member's
 * replica, so a member that lost its disk since the last reading shows as a new replica. Asked
 * to wait (ProbeOptions.waitFor), each member holds its answer until it has the serial. The
 * probing member itself, when it belongs to the target (a transfer POSTed at its target), reads
 * its own replica in place: its peer credential names only the others, so its own peer route
 * would refuse it (401) on every probe.
 */
export class HttpFrontierProbe implements FrontierProbe {
  constructor(
    private readonly roster: Roster,
    private readonly clock: Clock,
    private readonly options: {
      token?: string;
      headers?: Record<string, string>;
      tracker?: MemberTracker;
      /** This member, and its replica of a feed read in place (held for `waitFor` as its route would). */
      own?: { member: MemberId; read(origin: FeedOrigin, options: ProbeOptions): Promise<AppliedPosition> };
    } = {},
  ) {}

  async probe(target: string, origin: FeedOrigin, options: ProbeOptions): Promise<FrontierReading | undefined> {
    const members = this.roster.membersOf(target);
    const readings = await Promise.all(
      members.map(async (member): Promise<MemberReading | undefined> => {
        try {
          const own = this.options.own;
          if (own && member.id === own.member) {
            const position = await own.read(origin, options);
            const serial = position.incarnation === origin.incarnation ? position.serial : 0;
            return { member: member.id, serial, replica: position.storage, ...(options.waitFor ? { waited: true } : {}) };
          }
          const body = (await fetchPeerJson(
            `${member.publicUrl}/availability/v1/feeds/${encodeURIComponent(origin.member)}/applied${waitQuery(origin, options)}`,
            { clock: this.clock, timeoutMs: options.timeoutMs, signal: options.signal, token: this.options.token, headers: this.options.headers },
          )) as { serial?: unknown; incarnation?: unknown; storage?: unknown; wait?: { atLeast?: unknown } };
          this.options.tracker?.heard(member.id);
          if (!Number.isSafeInteger(body?.serial) || (body.serial as number) < 0) return undefined;
          const replica = typeof body.storage === 'string' ? body.storage : undefined;
          const serial = body.incarnation === origin.incarnation ? (body.serial as number) : 0;
          // A member that does not know waiting probes ignores the query and sends no `wait`.
          const waited = options.waitFor !== undefined && body.wait?.atLeast === options.waitFor.serial;
          return { member: member.id, serial, replica, ...(waited ? { waited } : {}) };
        } catch {
          return undefined;
        }
      }),
    );
    options.signal.throwIfAborted();
    return datacenterFrontier(readings);
  }
}

function waitQuery(origin: FeedOrigin, options: ProbeOptions): string {
  if (!options.waitFor) return '';
  const { serial, waitMs } = options.waitFor;
  return `?incarnation=${encodeURIComponent(origin.incarnation)}&atLeast=${serial}&waitMs=${waitMs}`;
}
