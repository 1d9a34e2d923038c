import { z } from 'zod';
import {
  CLOCK,
  type CorruptRecordError,
  LOGGER,
  METADATA_CONSENSUS,
  STATE_MACHINE,
  PEER_TRANSPORT,
  RNG,
} from '@baton/contracts';
import { definePlugin, DirectoryFiles, resolveOptional } from '@baton/kernel';
import { PEER_AUTH, METRICS } from '@baton/http';
import { DEFAULT_TUNING } from './driver/options.js';
import { RaftConsensus } from './driver/raft-consensus.js';
import { FileRaftStorage } from './storage/file-storage.js';
import { MemoryRaftStorage } from './storage/memory-storage.js';
import { HttpPeerTransport, RAFT_HTTP_BASE, RAFT_PEER_ROUTER } from './transport-http.js';

const memberId = z.string().min(1).max(256).regex(/^[A-Za-z0-9._-]+$/, 'use letters, digits, ".", "_" and "-"');
const positive = z.number().int().positive();

/**
 * A deployed member's election timing: heartbeats every 50 ms, an election after 0.5-1 s of
 * silence (etcd runs 100 ms / 1 s). A member's process can be descheduled on a busy machine or
 * paused by a major GC at a million records for a few hundred ms; the 100 ms timeout the
 * simulations use (DEFAULT_TUNING) turned such pauses into elections. A lone voter campaigns at
 * once, so a single-member host starts as fast as before.
 */
const HOST_ELECTION_TICKS = 50;
const HOST_HEARTBEAT_TICKS = 5;

export const raftOptionsSchema = z
  .object({
    /** This member's id, as the other members and the transport know it. */
    member: memberId,
    /** The bootstrap voters: identical on every member of the cluster (this one included, unless it joins later). */
    voters: z.array(memberId).min(1),
    cluster: z.string().min(1).default('baton'),
    /** Directory for the Raft log and snapshots. Without it, state lives in memory and dies with the process. */
    dataDir: z.string().min(1).optional(),
    tickMs: positive.default(DEFAULT_TUNING.tickMs),
    electionTicks: positive.min(2).default(HOST_ELECTION_TICKS),
    heartbeatTicks: positive.default(HOST_HEARTBEAT_TICKS),
    maxQueue: positive.default(DEFAULT_TUNING.maxQueue),
    snapshotInterval: positive.default(DEFAULT_TUNING.snapshotInterval),
    snapshotRetain: z.number().int().nonnegative().default(DEFAULT_TUNING.snapshotRetain),
    idempotencyWindow: positive.default(DEFAULT_TUNING.idempotencyWindow),
    proposeTimeoutMs: positive.default(DEFAULT_TUNING.proposeTimeoutMs),
    readTimeoutMs: positive.default(DEFAULT_TUNING.readTimeoutMs),
  })
  .strict()
  .refine((o) => o.heartbeatTicks < o.electionTicks, {
    message: 'heartbeatTicks must be below electionTicks, or followers time out between heartbeats',
    path: ['heartbeatTicks'],
  });

/**
 * The in-memory Raft as the host's MetadataConsensus: replicates the host's STATE_MACHINE over
 * the PEER_TRANSPORT, with the log on disk (dataDir) or in memory.
 */
export const raftConsensusPlugin = definePlugin({
  id: 'raft',
  description: 'Metadata consensus by Raft (pre-vote, check-quorum, ReadIndex, snapshots, single-voter changes).',
  provides: [METADATA_CONSENSUS],
  requires: [STATE_MACHINE, CLOCK, RNG, LOGGER, PEER_TRANSPORT],
  options: raftOptionsSchema,
  register: (ctx) => {
    const o = ctx.options;
    ctx.provide(METADATA_CONSENSUS, {
      useFactory: (resolve) => {
        const logger = resolve(LOGGER);
        if (!o.dataDir) logger.warn({ member: o.member }, 'raft keeps its log in memory: a restart loses this member\'s state');
        const metrics = resolveOptional(resolve, METRICS);
        // Damage found at start fails it; counted first (baton_storage_corruptions_total).
        const onCorruption = (error: CorruptRecordError) => metrics?.storageCorruptions.inc({ store: error.store });
        return new RaftConsensus({
          self: o.member,
          voters: o.voters,
          cluster: o.cluster,
          machine: resolve(STATE_MACHINE),
          storage: o.dataDir ? new FileRaftStorage(new DirectoryFiles(o.dataDir), { onCorruption }) : new MemoryRaftStorage(),
          transport: resolve(PEER_TRANSPORT),
          clock: resolve(CLOCK),
          rng: resolve(RNG),
          logger,
          tickMs: o.tickMs,
          electionTicks: o.electionTicks,
          heartbeatTicks: o.heartbeatTicks,
          maxQueue: o.maxQueue,
          snapshotInterval: o.snapshotInterval,
          snapshotRetain: o.snapshotRetain,
          idempotencyWindow: o.idempotencyWindow,
          proposeTimeoutMs: o.proposeTimeoutMs,
          readTimeoutMs: o.readTimeoutMs,
        });
      },
    });
  },
});

export const httpPeerTransportOptionsSchema = z
  .object({
    member: memberId,
    /** The other members' base URLs (where their public server listens). */
    peers: z.record(memberId, z.url()),
    cluster: z.string().min(1).default('baton'),
    /** Largest stream frame or peer request (default 4 MiB). */
    maxMessageBytes: positive.optional(),
    /** Largest snapshot or oversized append, sent on its own POST, one read at a time per sender (default 64 MiB). */
    maxLargeMessageBytes: positive.optional(),
    /** Large messages read at once from all senders together (default one per peer). */
    maxLargeMessagesInFlight: positive.optional(),
    /** A large message not whole this long after its headers answers 408 (default maxLargeMessageBytes at 2 MiB/s, at least 5 s). */
    largeMessageDeadlineMs: positive.optional(),
    /** Forwarded proposals handled at once (default 32). */
    maxConcurrentRequests: positive.optional(),
    /** A forwarded proposal not whole this long after its headers answers 408 and frees its slot (default 5 s). */
    requestDeadlineMs: positive.optional(),
  })
  .strict();

/**
 * Members talk over HTTP: provides the PEER_TRANSPORT and the router (RAFT_PEER_ROUTER) the
 * host mounts on its public server at /internal/raft/v1. Every request carries this member's
 * credential and every route checks the sender's (PEER_AUTH, which the host provides).
 */
export const httpPeerTransportPlugin = definePlugin({
  id: 'raft-http-transport',
  description: 'Peer messages over HTTP with keep-alive, validated on receipt.',
  provides: [PEER_TRANSPORT, RAFT_PEER_ROUTER],
  requires: [CLOCK, LOGGER, PEER_AUTH],
  options: httpPeerTransportOptionsSchema,
  register: (ctx) => {
    const o = ctx.options;
    let transport: HttpPeerTransport | undefined;
    const make = (resolve: <T>(t: import('@baton/contracts').Token<T>) => T) => {
      const metrics = resolveOptional(resolve, METRICS);
      return (transport ??= new HttpPeerTransport({
        self: o.member,
        peers: Object.fromEntries(Object.entries(o.peers).filter(([id]) => id !== o.member)),
        cluster: o.cluster,
        auth: resolve(PEER_AUTH),
        maxMessageBytes: o.maxMessageBytes,
        maxLargeMessageBytes: o.maxLargeMessageBytes,
        maxLargeMessagesInFlight: o.maxLargeMessagesInFlight,
        largeMessageDeadlineMs: o.largeMessageDeadlineMs,
        maxConcurrentRequests: o.maxConcurrentRequests,
        requestDeadlineMs: o.requestDeadlineMs,
        clock: resolve(CLOCK),
        logger: resolve(LOGGER),
        // Skipped frames are refusals the stream's answer cannot show: counted with the others.
        onFrameRefused: (reason) => metrics?.peerRefusals.inc({ listener: 'peer-stream', route: `${RAFT_HTTP_BASE}/stream`, reason }),
      }));
    };
    ctx.provide(PEER_TRANSPORT, { useFactory: make });
    ctx.provide(RAFT_PEER_ROUTER, { useFactory: (resolve) => make(resolve).router() });
  },
});
