import { PeerAuthenticator, peerSecretDigest } from '@baton/http/internal/peer-auth.js';
// One voter of setup (b), run as its own process by http-processes.ts (forked, with an IPC
// channel): plugins/raft with file storage in a directory, peers reached over HTTP on loopback.
// Arguments: <self> <port> <peers as JSON {id: baseUrl}> <data dir>.
// HTTP in: POST /bench/propose {key, value} -> {index}   (a client's proposal, any member)
// IPC in:  {type:'status'} -> {type:'status', isLeader}
//          {type:'load', concurrency, seconds} -> {type:'result', summary}   (proposes here)
//          {type:'stop'} -> stops and exits.
import { createServer } from 'node:http';
import Koa from 'koa';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { SystemRng } from '@baton/kernel/internal/system-rng.js';
import {
  kvStateMachine,
  type KvCommand,
  type KvResult,
  type KvState,
} from '@baton/conformance/internal/kv-state-machine.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { DirectoryFiles } from '@baton/kernel/internal/byte-files.js';
import { FileRaftStorage } from '@baton/plugin-raft/internal/storage/file-storage.js';
import { HttpPeerTransport } from '@baton/plugin-raft/internal/transport-http.js';
import { runLoad } from './load.js';
import { performance } from 'node:perf_hooks';
import type { PeerTransport } from '@baton/contracts/internal/peer-transport.js';
import type { RaftStorage } from '@baton/plugin-raft/internal/storage/raft-storage.js';

type Command =
  { type: 'status' } | { type: 'load'; concurrency: number; seconds: number } | { type: 'stop' };

const [self, portText, peersJson, dataDir] = process.argv.slice(2);
if (!self || !portText || !peersJson || !dataDir || !process.send) {
  console.error('usage (forked with IPC): member.js <self> <port> <peers JSON> <data dir>');
  process.exit(2);
}
const reply = (message: unknown) => process.send!(message);
const peers = JSON.parse(peersJson) as Record<string, string>;
const clock = new SystemClock();
const logger = createSilentLogger();
// Peers authenticate as in production: each member's secret is derived from its id here.
const secretOf = (id: string) => `bench-peer-secret-of-${id}`.padEnd(40, '.');
const auth = PeerAuthenticator.secure(self, secretOf(self), Object.fromEntries(Object.keys(peers).map((id) => [id, peerSecretDigest(secretOf(id))])));
const http = new HttpPeerTransport({ self, peers, cluster: 'bench', clock, logger, auth });
const files = new DirectoryFiles(dataDir);
const fileStorage = new FileRaftStorage(files);
// BENCH_TRACE=1: every Raft message sent and received, every persist, on stderr with wall time.
const trace = process.env.BENCH_TRACE === '1';
const transport = trace ? tracedTransport(http) : http;
const storage = trace ? tracedStorage(fileStorage) : fileStorage;
const raft = new RaftConsensus<KvState, KvCommand, KvResult>({
  self,
  voters: [self, ...Object.keys(peers)],
  cluster: 'bench',
  machine: kvStateMachine,
  storage,
  transport,
  clock,
  rng: new SystemRng(),
  logger,
  maxQueue: 100_000,
  // etcd's timings in (c) (100 ms heartbeat, 1 s election), so both clusters do the same idle
  // work; BENCH_RAFT_TIMING=default keeps the plugin's (10 ms heartbeat), for comparison.
  ...(process.env.BENCH_RAFT_TIMING === 'default'
    ? {}
    : { tickMs: 100, heartbeatTicks: 1, electionTicks: 10 }),
  snapshotInterval: 50_000,
});

const app = new Koa();
// A client's proposal over HTTP (bench/scale client-hop): {key, value} in, the receipt's index out.
// Any member takes it; a follower forwards it to the leader, as the hosts' admin APIs do.
app.use(async (ctx, next) => {
  if (ctx.method !== 'POST' || ctx.path !== '/bench/propose') return next();
  let text = '';
  for await (const chunk of ctx.req) text += chunk;
  const { key, value } = JSON.parse(text) as { key: string; value: string };
  try {
    const receipt = await raft.propose({ op: 'put', key, value });
    ctx.body = { index: receipt.position.index };
  } catch (error) {
    ctx.status = 503;
    ctx.body = { error: (error as Error).message };
  }
});
const router = http.router();
app.use(router.routes()).use(router.allowedMethods());
const server = createServer(app.callback());
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve, reject) => {
  server.once('error', reject);
  server.listen(Number(portText), '127.0.0.1', resolve);
});
await raft.start();
reply({ type: 'ready' });

process.on('message', (command: Command) => {
  void (async () => {
    if (command.type === 'status') {
      reply({ type: 'status', isLeader: raft.leadership().isLeader });
    } else if (command.type === 'load') {
      const summary = await runLoad(command.concurrency, command.seconds, async (w, n) => {
        if (trace) note(`propose ${n}`);
        const receipt = await raft.propose({ op: 'put', key: `k${w}`, value: String(n) });
        if (trace) note(`answer ${n} index ${receipt.position.index}`);
        return receipt;
      });
      reply({ type: 'result', summary });
    } else if (command.type === 'stop') {
      await raft.stop();
      await http.stop();
      await files.close();
      server.closeAllConnections();
      server.close();
      process.exit(0);
    }
  })();
});
// The parent died without saying stop: do not linger.
process.on('disconnect', () => process.exit(1));

function note(what: string): void {
  process.stderr.write(
    `${(performance.timeOrigin + performance.now()).toFixed(2)} ${self} ${what}\n`,
  );
}

function describe(body: unknown): string {
  const m = (
    body as { message?: { type: string; index?: number; commit?: number; entries?: unknown[] } }
  ).message;
  return m
    ? `${m.type} i=${m.index ?? ''} c=${m.commit ?? ''} n=${m.entries?.length ?? 0}`
    : 'other';
}

function tracedTransport(inner: HttpPeerTransport): PeerTransport {
  return {
    self: inner.self,
    send: (to, message) => {
      note(`send ${to} ${describe(message.body)}`);
      inner.send(to, message);
    },
    request: (to, message, options) => inner.request(to, message, options),
    listen: (channel, handlers) =>
      inner.listen(channel, {
        onMessage: (from, message) => {
          note(`recv ${from} ${describe(message.body)}`);
          handlers.onMessage(from, message);
        },
        ...(handlers.onRequest ? { onRequest: handlers.onRequest.bind(handlers) } : {}),
      }),
  };
}

function tracedStorage(inner: FileRaftStorage): RaftStorage {
  return {
    load: () => inner.load(),
    persist: async (batch) => {
      const started = performance.now();
      await inner.persist(batch);
      note(
        `persisted n=${batch.entries.length} hs=${batch.hardState ? batch.hardState.commit : '-'} in ${(performance.now() - started).toFixed(2)} ms`,
      );
    },
    writeSnapshot: (snapshot) => inner.writeSnapshot(snapshot),
    compact: (...args) => inner.compact(...args),
    close: () => inner.close(),
  };
}
