import type { MemberId } from '@baton/contracts';
import type { FeedEntry } from './change-feed.js';
import type { AppliedPosition } from './feed-replicas.js';
import type { FrontierProbe } from './frontier-probe.js';

/**
 * The loss report of a failover: which writes of the authority the old home's members had
 * acknowledged that the new home had not applied when the move was proposed, so reconciliation
 * starts from a list rather than a guess. It is read by the member proposing the failover, from
 * its own replicas of the old home's feeds (what those members acknowledged, as far as this
 * member pulled it) and the new home's applied serials of them (probed, or read in place when
 * the proposer is a member of the new home). It cannot know writes an old member acknowledged
 * after this member's last pull: `pulled` names how far each member's feed was seen.
 */
export interface FailoverLoss {
  /** The lost serials, oldest first per member, at most MAX_LOSS_LISTED. */
  lost: LostSerial[];
  /** How many lost serials were found (`lost` may list fewer). */
  lost_count: number;
  /** Per old-home member: how far this member had pulled its feed, and the new home had applied it. */
  feeds: LossFeed[];
  /** Old-home members whose loss could not be read, and why. */
  unknown: { member: MemberId; why: string }[];
  /** The member that read it. */
  read_by: MemberId;
}

export interface LostSerial {
  member: MemberId;
  serial: number;
}

export interface LossFeed {
  member: MemberId;
  incarnation: string;
  /** The last serial of the member's feed the proposer held (what it knows was acknowledged). */
  pulled: number;
  /** The serial the new home had applied through (the lowest of its members). */
  applied: number;
}

/** At most this many lost serials are listed in a record; `lost_count` counts them all. */
export const MAX_LOSS_LISTED = 100;
/** A report names at most this many old-home members (a datacenter's members, with room to spare). */
const MAX_LOSS_MEMBERS = 64;
/** Names and reasons in a report are cut to this length: a record stays bounded whoever proposed it. */
const MAX_TEXT = 256;

export interface LossReading {
  self: MemberId;
  /** This member's replicas of its peers' feeds. */
  replicas: { applied(origin: MemberId): AppliedPosition; entries(origin: MemberId, after: number, limit: number): FeedEntry[] };
  probe: FrontierProbe;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Reads the loss of failing `authority` over from the members `oldHome` to datacenter `target`.
 * Costs one probe of the new home per old member (in parallel, each bounded by `timeoutMs`) and a
 * scan of this member's replica between the two serials (bounded by what the replica retains).
 */
export async function readFailoverLoss(authority: string, oldHome: readonly MemberId[], target: string, deps: LossReading): Promise<FailoverLoss> {
  const report: FailoverLoss = { lost: [], lost_count: 0, feeds: [], unknown: [], read_by: deps.self };
  const signal = deps.signal ?? new AbortController().signal;
  const members = oldHome.slice(0, MAX_LOSS_MEMBERS);
  // Positions first, then every probe at once: the slowest member bounds the wait, not their sum.
  const positions = members.map((member) => deps.replicas.applied(member));
  const readings = await Promise.all(
    members.map((member, i) => {
      const incarnation = positions[i]!.incarnation;
      return incarnation === undefined
        ? undefined
        : deps.probe.probe(target, { member, incarnation }, { signal, timeoutMs: deps.timeoutMs }).catch(() => undefined);
    }),
  );
  for (const [i, member] of members.entries()) {
    const held = positions[i]!;
    if (held.incarnation === undefined) {
      report.unknown.push({ member, why: `${deps.self} never pulled its feed` });
      continue;
    }
    const reading = readings[i];
    if (!reading) {
      report.unknown.push({ member, why: `no member of ${target} answered how far it applied the feed` });
      continue;
    }
    report.feeds.push({ member, incarnation: held.incarnation, pulled: held.serial, applied: reading.serial });
    if (reading.serial >= held.serial) continue;
    const entries = deps.replicas.entries(member, reading.serial, held.serial - reading.serial);
    const first = entries[0]?.serial ?? held.serial + 1;
    if (first > reading.serial + 1) {
      report.unknown.push({ member, why: `${deps.self} no longer holds serials ${reading.serial + 1}-${first - 1} of its feed` });
    }
    for (const entry of entries) {
      if (entry.authority !== authority) continue;
      report.lost_count += 1;
      if (report.lost.length < MAX_LOSS_LISTED) report.lost.push({ member, serial: entry.serial });
    }
  }
  return report;
}

/**
 * The report as a record carries it (its `evidence`): rebuilt field by field within the bounds,
 * so the state machine seals the same bounded text on every member whatever a proposer sent.
 * Pure; undefined when `loss` is no report.
 */
export function lossEvidence(loss: unknown): string | undefined {
  if (loss === null || typeof loss !== 'object') return undefined;
  const given = loss as Partial<Record<keyof FailoverLoss, unknown>>;
  const text = (value: unknown) => (typeof value === 'string' ? value.slice(0, MAX_TEXT) : '');
  const count = (value: unknown) => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : 0);
  const list = (value: unknown, bound: number) => (Array.isArray(value) ? value.slice(0, bound).filter((v) => v !== null && typeof v === 'object') : []);
  const lost = list(given.lost, MAX_LOSS_LISTED).map((l) => ({ member: text(l.member), serial: count(l.serial) }));
  const report: FailoverLoss = {
    lost,
    lost_count: Math.max(count(given.lost_count), lost.length),
    feeds: list(given.feeds, MAX_LOSS_MEMBERS).map((f) => ({ member: text(f.member), incarnation: text(f.incarnation), pulled: count(f.pulled), applied: count(f.applied) })),
    unknown: list(given.unknown, MAX_LOSS_MEMBERS).map((u) => ({ member: text(u.member), why: text(u.why) })),
    read_by: text(given.read_by),
  };
  return JSON.stringify(report);
}

/** The report a failover record carries, parsed back (undefined for a record without one). */
export function lossOf(evidence: string | undefined): FailoverLoss | undefined {
  if (evidence === undefined) return undefined;
  try {
    const parsed = JSON.parse(evidence) as FailoverLoss;
    return parsed && typeof parsed === 'object' && Array.isArray(parsed.lost) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
