import { testPeerAuth } from '../../support/peer-auth.js';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Host } from '@baton/kernel/internal/host.js';
import type { StreamNodeService } from '@baton/stream-transfer/internal/stream-node-service.js';
import { freeLoopbackPort } from '@baton/conformance/internal/servers/redis-server.js';
import { S3_TEST_CREDENTIALS, type S3Server } from '@baton/testing/internal/s3-server.js';
import { startStreamNode } from '@baton/host-stream-node/internal/host.js';

export const ADMIN_TOKEN = 's3-e2e-admin';

export interface S3StreamCluster {
  ids: string[];
  urls: string[];
  nodes: { host: Host; node: StreamNodeService }[];
  stop(): Promise<void>;
}

/**
 * Stream nodes as a deployment runs them: voters of one Raft over HTTP on their own listeners,
 * WAL and Raft log on disk under `dir`, every node on the same bucket of the S3 server (so the
 * new owner of a stream reads the segments its old owner wrote).
 */
export async function startS3StreamCluster(
  server: S3Server,
  dir: string,
  ids: string[],
): Promise<S3StreamCluster> {
  const ports = await Promise.all(ids.map(() => freeLoopbackPort()));
  const urls = ports.map((port) => `http://127.0.0.1:${port}`);
  const peers = Object.fromEntries(ids.map((id, i) => [id, urls[i]]));
  const bucket = `baton-e2e-${randomBytes(4).toString('hex')}`;
  const configs = ids.map((id, i) => ({
    node: {
      self: id,
      address: urls[i],
      http: { port: ports[i], host: '127.0.0.1' },
      wal: { kind: 'file', dir: join(dir, id, 'wal') },
      tokens: [{ token: ADMIN_TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }],
    },
    dataDir: join(dir, id),
    consensus: {
      use: 'raft',
      options: { member: id, voters: ids, dataDir: join(dir, id, 'raft') },
    },
    peerTransport: { use: 'raft-http-transport', options: { member: id, peers } },
    peerAuth: testPeerAuth(id, ids),
    objectStore: {
      use: 's3-object-store',
      options: {
        endpoint: server.endpoint,
        ...S3_TEST_CREDENTIALS,
        bucket,
        createBucket: true,
        // s3rver lists in directory order, not key order.
        serverSortsListings: false,
        // Quick retries: an outage reaches the node's own retry loop within a few hundred ms.
        retry: { attempts: 2, baseDelayMs: 20, maxDelayMs: 100 },
      },
    },
    log: { level: 'silent' },
  }));
  // Started together: a Raft of several voters elects no leader until a majority is up.
  const started = await Promise.allSettled(configs.map((config) => startStreamNode(config)));
  const nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async () => {
    for (const { host } of [...nodes].reverse()) await host.stop();
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stop();
    throw (failed as PromiseRejectedResult).reason;
  }
  return { ids, urls, nodes, stop };
}
