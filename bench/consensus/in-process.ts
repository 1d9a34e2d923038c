// Setup (a): three Raft voters in one process, memory storage, an in-process transport that hands
// Raft messages over on the next microtask by reference: in one process there is no wire to
// serialise for (the receiving driver still checks every message; entries are never mutated once
// created, so sharing them is safe). Setup (b) measures the real wire.
import type {
  MemberId,
  PeerHandlers,
  PeerMessage,
  PeerTransport,
} from '../../framework/contracts/peer-transport.js';
import { PeerUnreachableError } from '../../framework/contracts/peer-transport.js';
import { createSilentLogger } from '../../framework/kernel/pino-logger.js';
import { SystemClock } from '../../framework/kernel/system-clock.js';
import { SystemRng } from '../../framework/kernel/system-rng.js';
import {
  kvStateMachine,
  type KvCommand,
  type KvResult,
  type KvState,
} from '../../framework/testing/fakes/kv-state-machine.js';
import { RaftConsensus } from '../../plugins/raft/driver/raft-consensus.js';
import { MemoryRaftStorage } from '../../plugins/raft/storage/memory-storage.js';
import { runLoad, waitUntil, type LoadSummary } from './load.js';

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

/** A fresh in-process cluster per concurrency, so one run's log does not slow the next. */
export async function benchInProcess(
  concurrencies: number[],
  seconds: number,
): Promise<LoadSummary[]> {
  const results: LoadSummary[] = [];
  for (const concurrency of concurrencies) {
    const clock = new SystemClock();
    const ids = ['b1', 'b2', 'b3'];
    const net = new InProcessNetwork();
    const members = ids.map(
      (id) =>
        new RaftConsensus<KvState, KvCommand, KvResult>({
          self: id,
          voters: ids,
          machine: kvStateMachine,
          storage: new MemoryRaftStorage(),
          transport: net.transport(id),
          clock,
          rng: new SystemRng(),
          logger: createSilentLogger(),
          maxQueue: 100_000,
          snapshotInterval: 50_000,
        }),
    );
    for (const m of members) await m.start();
    try {
      await waitUntil(
        () => members.some((m) => m.leadership().isLeader),
        10_000,
        'no in-process leader elected',
      );
      const leader = members.find((m) => m.leadership().isLeader)!;
      results.push(
        await runLoad(concurrency, seconds, (w, n) =>
          leader.propose({ op: 'put', key: `k${w}`, value: String(n) }),
        ),
      );
    } finally {
      for (const m of members) await m.stop();
    }
  }
  return results;
}
