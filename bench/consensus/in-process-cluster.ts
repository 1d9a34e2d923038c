// Three (or more) Raft voters in one process for benchmarks: memory storage, the system clock,
// silent logs and an in-process transport that hands Raft messages over on the next microtask by
// reference. In one process there is no wire to serialise for (the receiving driver still checks
// every message; entries are never mutated once created, so sharing them is safe). The proposal
// queue is large so a bench's concurrency is refused by nothing but its own load.
import type { StateMachine } from '@baton/contracts/internal/metadata-consensus.js';
import {
  type MemberId,
  type PeerHandlers,
  type PeerMessage,
  type PeerTransport,
  PeerUnreachableError,
} from '@baton/contracts/internal/peer-transport.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { SystemRng } from '@baton/kernel/internal/system-rng.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { MemoryRaftStorage } from '@baton/plugin-raft/internal/storage/memory-storage.js';
import { waitUntil } from './load.js';

/** Delivers on the next microtask; requests (proposal forwarding, unused here) cross as JSON. */
export class InProcessNetwork {
  private readonly handlers = new Map<MemberId, Map<string, PeerHandlers>>();
  transport(self: MemberId): PeerTransport {
    const handlers = this.handlers;
    const mine = new Map<string, PeerHandlers>();
    this.handlers.set(self, mine);
    return {
      self,
      send(to: MemberId, message: PeerMessage) {
        queueMicrotask(() => handlers.get(to)?.get(message.channel)?.onMessage(self, message));
      },
      async request(to: MemberId, message: PeerMessage) {
        const h = handlers.get(to)?.get(message.channel);
        if (!h?.onRequest) throw new PeerUnreachableError(to, 'no handler');
        const answer = await h.onRequest(self, {
          channel: message.channel,
          body: JSON.parse(JSON.stringify(message.body)),
        });
        return { channel: answer.channel, body: JSON.parse(JSON.stringify(answer.body)) };
      },
      listen(channel: string, handlers: PeerHandlers) {
        mine.set(channel, handlers);
        return () => mine.delete(channel);
      },
    };
  }
}

export interface InProcessClusterOptions<S, C, R> {
  /** Member ids, every one a voter. */
  ids: string[];
  machine: StateMachine<S, C, R>;
  /** Applied entries between snapshots; the driver's default when absent. */
  snapshotInterval?: number;
}

export interface InProcessCluster<S, C, R> {
  members: RaftConsensus<S, C, R>[];
  /** The member that won the first election. */
  leader: RaftConsensus<S, C, R>;
  stop(): Promise<void>;
}

/** Starts every member and waits (up to 10 s) for a leader; stops them again if none is elected. */
export async function startInProcessCluster<S, C, R>(
  options: InProcessClusterOptions<S, C, R>,
): Promise<InProcessCluster<S, C, R>> {
  const clock = new SystemClock();
  const net = new InProcessNetwork();
  const members = options.ids.map(
    (id) =>
      new RaftConsensus<S, C, R>({
        self: id,
        voters: options.ids,
        machine: options.machine,
        storage: new MemoryRaftStorage(),
        transport: net.transport(id),
        clock,
        rng: new SystemRng(),
        logger: createSilentLogger(),
        maxQueue: 100_000,
        snapshotInterval: options.snapshotInterval,
      }),
  );
  const stop = async () => {
    for (const m of members) await m.stop();
  };
  try {
    for (const m of members) await m.start();
    await waitUntil(() => members.some((m) => m.leadership().isLeader), 10_000, 'no in-process leader elected');
  } catch (error) {
    await stop();
    throw error;
  }
  const leader = members.find((m) => m.leadership().isLeader)!;
  return { members, leader, stop };
}
