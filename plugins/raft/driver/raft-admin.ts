import {
  type Clock,
  LeaderMoveFailedError,
  ReadUnavailableError,
  type ConsensusSnapshot,
  type Leadership,
  type MembershipDetails,
  type VoterDetails,
  type MemberId,
  type PeerMessage,
  type PeerTransport,
} from '@baton/contracts';
import type { Progress } from '../core/progress.js';
import type { SnapshotImage } from '../storage/snapshot-image.js';

/** The channel of administrative requests between members (member details, leader moves, addresses). */
export const ADMIN_CHANNEL = 'raft-admin';

/** The name of the Raft plugin's snapshot format in exported snapshots (the pieces of a snapshot file). */
export const RAFT_SNAPSHOT_FORMAT = 'baton-raft-snapshot/1';

/** What the administration needs from the driver. */
export interface AdminHost {
  readonly self: MemberId;
  readonly cluster: string;
  readonly clock: Clock;
  readonly transport: PeerTransport;
  /** One election timeout: how long a voter may be silent and still count as live. */
  readonly electionTimeoutMs: number;
  running(): boolean;
  leadership(): Leadership;
  onLeadership(fn: (leadership: Leadership) => void): () => void;
  voters(): MemberId[];
  progressOf(member: MemberId): Readonly<Progress> | undefined;
  applied(): number;
  /** Runs `input` in the driver's loop. */
  enqueue(input: () => void): void;
  transferLeader(member: MemberId): void;
  /** A linearizable read; resolves once this member applied past the read index. */
  read(options: { signal?: AbortSignal; timeoutMs?: number }): Promise<unknown>;
  /** The replicated state as applied now (window and machine), its index, term and voters. */
  captureApplied(): { index: number; term: number; voters: MemberId[]; image: SnapshotImage };
}

type AdminRequest =
  | { kind: 'members'; cluster: string }
  | { kind: 'move-leader'; cluster: string; member: MemberId }
  | { kind: 'learn-peer'; cluster: string; member: MemberId; address: string };

const MEMBER_ID = /^[A-Za-z0-9._-]{1,256}$/;

function parseRequest(body: unknown): AdminRequest | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  if (typeof b.cluster !== 'string') return undefined;
  if (b.kind === 'members') return { kind: 'members', cluster: b.cluster };
  if (b.kind === 'move-leader' && typeof b.member === 'string' && MEMBER_ID.test(b.member))
    return { kind: 'move-leader', cluster: b.cluster, member: b.member };
  if (
    b.kind === 'learn-peer' &&
    typeof b.member === 'string' &&
    MEMBER_ID.test(b.member) &&
    typeof b.address === 'string' &&
    b.address.length <= 2048
  )
    return { kind: 'learn-peer', cluster: b.cluster, member: b.member, address: b.address };
  return undefined;
}

function isDetails(body: unknown): body is MembershipDetails {
  return (
    typeof body === 'object' &&
    body !== null &&
    Array.isArray((body as MembershipDetails).voters) &&
    typeof (body as MembershipDetails).term === 'number'
  );
}

/**
 * The operator's side of a Raft member: who the voters are and how far each has come (the
 * leader's progress), moving the leadership (TimeoutNow once the target caught up), telling
 * the voters where a member being added listens, and a consistent snapshot of the replicated
 * state. Requests a follower cannot answer go to the leader on ADMIN_CHANNEL.
 */
export class RaftAdministration {
  /** When the leader last heard from each peer (clock ms): who counts as live. */
  private readonly lastHeard = new Map<MemberId, number>();

  constructor(private readonly host: AdminHost) {}

  /** Every Raft message from a peer passes here. */
  heard(from: MemberId): void {
    this.lastHeard.set(from, this.host.clock.now());
  }

  listen(): () => void {
    return this.host.transport.listen(ADMIN_CHANNEL, {
      onMessage: () => undefined,
      onRequest: (from, message) => this.answer(from, message),
    });
  }

  private async answer(_from: MemberId, message: PeerMessage): Promise<PeerMessage> {
    const request = parseRequest(message.body);
    if (!request || request.cluster !== this.host.cluster)
      return { channel: ADMIN_CHANNEL, body: { ok: false, reason: 'malformed or foreign request' } };
    switch (request.kind) {
      case 'members':
        if (!this.host.leadership().isLeader) return { channel: ADMIN_CHANNEL, body: { ok: false, reason: 'not the leader' } };
        return { channel: ADMIN_CHANNEL, body: this.localDetails() };
      case 'move-leader':
        if (!this.host.leadership().isLeader) return { channel: ADMIN_CHANNEL, body: { ok: false, reason: 'not the leader' } };
        this.host.enqueue(() => this.host.transferLeader(request.member));
        return { channel: ADMIN_CHANNEL, body: { ok: true } };
      case 'learn-peer':
        return { channel: ADMIN_CHANNEL, body: { ok: this.host.transport.addPeer?.(request.member, request.address) ?? false } };
    }
  }

  /** The details this member can give alone (match and liveness only when it leads). */
  localDetails(): MembershipDetails {
    const host = this.host;
    const leadership = host.leadership();
    const now = host.clock.now();
    const voters: VoterDetails[] = host.voters().map((id) => {
      const address = id === host.self ? undefined : host.transport.addressOf?.(id);
      const details: VoterDetails = { id, leader: leadership.leader === id, ...(address ? { address } : {}) };
      if (id === host.self) details.applied = host.applied();
      if (leadership.isLeader) {
        const progress = host.progressOf(id);
        if (progress) details.match = progress.match;
        const heard = this.lastHeard.get(id);
        details.live = id === host.self || (heard !== undefined && now - heard <= host.electionTimeoutMs);
      }
      return details;
    });
    return { term: leadership.term, ...(leadership.leader ? { leader: leadership.leader } : {}), from: host.self, voters };
  }

  /** The leader's details; this member's own when no leader answers in time. */
  async members(options: { timeoutMs?: number } = {}): Promise<MembershipDetails> {
    const leadership = this.host.leadership();
    if (leadership.isLeader || !leadership.leader) return this.localDetails();
    try {
      const answer = await this.host.transport.request(
        leadership.leader,
        { channel: ADMIN_CHANNEL, body: { kind: 'members', cluster: this.host.cluster } },
        { timeoutMs: options.timeoutMs ?? this.host.electionTimeoutMs * 2 },
      );
      if (isDetails(answer.body)) {
        const own = this.host.applied();
        // The leader does not know its own address; this member knows the leader's (and the others').
        return {
          ...answer.body,
          voters: answer.body.voters.map((v) => {
            if (v.id === this.host.self) return { ...v, applied: own };
            const address = v.address ?? this.host.transport.addressOf?.(v.id);
            return address ? { ...v, address } : v;
          }),
        };
      }
    } catch {
      // The leader did not answer: what this member knows.
    }
    return this.localDetails();
  }

  /** Tells every voter (best effort) where `member` listens, before it is added. */
  async announcePeer(member: MemberId, address: string): Promise<void> {
    const host = this.host;
    host.transport.addPeer?.(member, address);
    await Promise.all(
      host
        .voters()
        .filter((id) => id !== host.self && id !== member)
        .map((id) =>
          host.transport
            .request(
              id,
              { channel: ADMIN_CHANNEL, body: { kind: 'learn-peer', cluster: host.cluster, member, address } },
              { timeoutMs: host.electionTimeoutMs },
            )
            .catch(() => undefined),
        ),
    );
  }

  /**
   * Asks the leader to hand over to `member` (again each election timeout, as a transfer the
   * target could not finish lapses), until this member sees `member` lead or the time is up.
   */
  async moveLeader(member: MemberId, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Leadership> {
    const host = this.host;
    const timeoutMs = options.timeoutMs ?? host.electionTimeoutMs * 20;
    const deadline = host.clock.now() + timeoutMs;
    for (;;) {
      const now = host.leadership();
      if (now.leader === member) return now;
      if (!host.running()) throw new ReadUnavailableError(`member ${host.self} stopped`);
      options.signal?.throwIfAborted();
      const remaining = deadline - host.clock.now();
      if (remaining <= 0)
        throw new LeaderMoveFailedError(`${member} did not become leader within ${timeoutMs} ms (the leader is ${now.leader ?? 'unknown'})`);
      if (now.isLeader) host.enqueue(() => host.transferLeader(member));
      else if (now.leader) {
        await host.transport
          .request(
            now.leader,
            { channel: ADMIN_CHANNEL, body: { kind: 'move-leader', cluster: host.cluster, member } },
            { timeoutMs: Math.min(remaining, host.electionTimeoutMs) },
          )
          .catch(() => undefined);
      }
      await this.leadershipChange(Math.min(deadline - host.clock.now(), host.electionTimeoutMs), member);
    }
  }

  private leadershipChange(ms: number, member: MemberId): Promise<void> {
    return new Promise((resolve) => {
      let off: () => void = () => undefined;
      const timer = this.host.clock.setTimer(Math.max(ms, 1), () => {
        off();
        resolve();
      });
      off = this.host.onLeadership((l) => {
        if (l.leader !== member) return;
        timer.cancel();
        off();
        resolve();
      });
    });
  }

  /** After a linearizable read: the replicated state at the index this member applied. */
  async exportSnapshot(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ConsensusSnapshot> {
    await this.host.read(options);
    const { index, term, voters, image } = this.host.captureApplied();
    return { format: RAFT_SNAPSHOT_FORMAT, index, term, voters, pieces: [...image.pieces()] };
  }
}
