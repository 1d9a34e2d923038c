import type { Clock } from '../contracts/clock.js';
import type { MemberId } from '../contracts/peer-transport.js';
import { datacenterFrontier, type FrontierProbe, type ProbeOptions } from './frontier-probe.js';
import type { MemberTracker } from './member-tracker.js';
import { fetchPeerJson } from './peer-fetch.js';
import type { Roster } from './roster.js';

/**
 * Probes a target datacenter over HTTP: GET {public}/availability/v1/feeds/{origin}/applied on
 * every member the roster lists for it, in parallel. A member that does not answer in time, or
 * answers nonsense, has no reading, and then neither has the datacenter.
 */
export class HttpFrontierProbe implements FrontierProbe {
  constructor(
    private readonly roster: Roster,
    private readonly clock: Clock,
    private readonly options: { token?: string; tracker?: MemberTracker } = {},
  ) {}

  async probe(target: string, origin: MemberId, options: ProbeOptions): Promise<number | undefined> {
    const members = this.roster.membersOf(target);
    const readings = await Promise.all(
      members.map(async (member) => {
        try {
          const body = (await fetchPeerJson(
            `${member.publicUrl}/availability/v1/feeds/${encodeURIComponent(origin)}/applied`,
            { clock: this.clock, timeoutMs: options.timeoutMs, signal: options.signal, token: this.options.token },
          )) as { serial?: unknown };
          this.options.tracker?.heard(member.id);
          return Number.isSafeInteger(body?.serial) && (body.serial as number) >= 0 ? (body.serial as number) : undefined;
        } catch {
          return undefined;
        }
      }),
    );
    options.signal.throwIfAborted();
    return datacenterFrontier(readings);
  }
}
