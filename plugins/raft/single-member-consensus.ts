import { z } from 'zod';
import {
  CLOCK,
  type CorruptRecordError,
  LOGGER,
  METADATA_CONSENSUS,
  STATE_MACHINE,
  PeerUnreachableError,
  type PeerHandlers,
  type PeerMessage,
  type PeerTransport,
  RNG,
} from '@baton/contracts';
import { METRICS } from '@baton/http';
import { resolveOptional, definePlugin, DirectoryFiles } from '@baton/kernel';
import { RaftConsensus } from './driver/raft-consensus.js';
import { FileRaftStorage } from './storage/file-storage.js';
import { MemoryRaftStorage } from './storage/memory-storage.js';

/** A transport with nobody to talk to: a lone voter never sends, and cannot be reached. */
class NoPeersTransport implements PeerTransport {
  constructor(readonly self: string) {}

  send(): void {}

  async request(to: string, _message: PeerMessage): Promise<PeerMessage> {
    throw new PeerUnreachableError(to, `${this.self} runs a one-voter consensus and has no peers`);
  }

  listen(_channel: string, _handlers: PeerHandlers): () => void {
    return () => undefined;
  }
}

/**
 * A one-voter Raft without a network: the ownership consensus of a node that runs alone. With a
 * `dataDir` its log and snapshots are on disk and ownership survives a restart; without one it
 * lives in memory and a restart loses every home, epoch and pending audit (development only).
 * A deployment that may grow chooses the `raft` plugin with the HTTP transport instead.
 */
export const singleMemberConsensusPlugin = definePlugin({
  id: 'single-member-consensus',
  description: 'One-voter Raft with no peers: durable with dataDir, in memory (and lost on restart) without.',
  provides: [METADATA_CONSENSUS],
  requires: [STATE_MACHINE, CLOCK, RNG, LOGGER],
  options: z
    .object({
      self: z.string().min(1, 'the member id, the same as node.self'),
      dataDir: z.string().min(1).optional(),
    })
    .strict(),
  register: (ctx) =>
    ctx.provide(METADATA_CONSENSUS, {
      useFactory: (resolve) => {
        const { self, dataDir } = ctx.options;
        const logger = resolve(LOGGER);
        if (!dataDir) logger.warn({ member: self }, 'the one-voter consensus keeps ownership in memory: a restart loses it');
        const metrics = resolveOptional(resolve, METRICS);
        const onCorruption = (error: CorruptRecordError) => metrics?.storageCorruptions.inc({ store: error.store });
        return new RaftConsensus({
          self,
          voters: [self],
          machine: resolve(STATE_MACHINE),
          storage: dataDir ? new FileRaftStorage(new DirectoryFiles(dataDir), { onCorruption }) : new MemoryRaftStorage(),
          transport: new NoPeersTransport(self),
          clock: resolve(CLOCK),
          rng: resolve(RNG),
          logger,
        });
      },
    }),
});
