import type { ExecutionContext } from 'ava';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { OBJECT_STORE, type ObjectStore } from '@baton/contracts/internal/object-store.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import type { Host } from '@baton/kernel/internal/host.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { STREAM_NODE } from '@baton/stream-transfer/internal/plugins.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import type { StreamNodeService } from '@baton/stream-transfer/internal/stream-node-service.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { sharedConsensus } from '@baton/testing/internal/fakes/shared-consensus.js';
import { streamNodeHostBuilder } from '@baton/host-stream-node/internal/host.js';

export const STREAM_TOKEN = 'cli-test-admin';

type SharedConsensus = LocalConsensus<StreamMetadata, StreamCommand, StreamResult>;

export interface StreamCluster {
  /** The nodes by id, each a real host serving its API on a loopback port. */
  nodes: Map<string, StreamNodeService>;
  consensus: SharedConsensus;
  /** The URL of the first node: what the commands are pointed at. */
  url: string;
  /** BATON_URL and BATON_TOKEN for the first node. */
  env: NodeJS.ProcessEnv;
  /** Waits until the stream is open for appends on its owner. */
  writable(stream: string): Promise<void>;
}

/**
 * Real stream-node hosts in this process on port 0, sharing one metadata consensus and one
 * object store, as a cluster on a durable consensus and a shared bucket would. Stopped after
 * the test, last started first.
 */
export async function startStreamCluster(
  t: ExecutionContext,
  ids: readonly string[] = ['n1'],
  options: { auditDir?: string; labels?: Record<string, Record<string, string>> } = {},
): Promise<StreamCluster> {
  const inner: SharedConsensus = new LocalConsensus(new StreamStateMachine());
  // Each host stops what provides its consensus token: hand out a view whose start/stop are
  // absent, so stopping one host leaves the metadata to the others.
  const consensus = sharedConsensus(inner);
  const hosts: Host[] = [];
  const nodes = new Map<string, StreamNodeService>();
  t.teardown(async () => {
    for (const host of hosts.reverse()) await host.stop();
  });
  let store: ObjectStore | undefined;
  for (const id of ids) {
    const builder = streamNodeHostBuilder({
      node: {
        self: id,
        http: { port: 0 },
        wal: { kind: 'memory' },
        tokens: [{ token: STREAM_TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }],
        ...(options.labels?.[id] ? { labels: options.labels[id] } : {}),
      },
      // Nothing on disk: the metadata is the shared consensus below, the objects in memory.
      dataDir: null,
      objectStore: { use: 'memory-object-store' },
      // Each node's audit trail in files under auditDir/<id> when asked (a test edits them), else in memory.
      ...(options.auditDir ? { auditStore: { use: 'fs-audit-store', options: { dir: `${options.auditDir}/${id}` } } } : {}),
      log: { level: 'silent' },
    }).value(METADATA_CONSENSUS, consensus);
    if (store) builder.value(OBJECT_STORE, store);
    const host = builder.build();
    await host.start();
    hosts.push(host);
    store ??= host.get(OBJECT_STORE);
    nodes.set(id, host.get(STREAM_NODE));
  }
  await eventually(
    () => ids.every((id) => inner.view().state.node(id) !== undefined),
    'every node to register itself',
  );
  const url = nodes.get(ids[0])!.url;
  return {
    nodes,
    consensus: inner,
    url,
    env: { BATON_URL: url, BATON_TOKEN: STREAM_TOKEN },
    writable: (stream) =>
      eventually(() => {
        const owner = inner.view().state.stream(stream)?.owner;
        return owner !== undefined && nodes.get(owner)?.node.session(stream)?.writable === true;
      }, `${stream} to be open on its owner`),
  };
}

/** Waits on a condition with a real deadline (these tests talk to real servers). */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  what: string,
  ms = 10_000,
): Promise<void> {
  const clock = new SystemClock();
  const deadline = clock.now() + ms;
  while (!(await condition())) {
    if (clock.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await clock.sleep(10);
  }
}
