// What the data plane's checks cost an append over HTTP: one stream node (LocalConsensus,
// memory object store, memory WAL) behind its real koa app and listener, 64 keep-alive clients
// appending 10 x 100 B records each, in rounds that alternate between an open data plane
// (`dataPlane.anonymous: "append"`, no token: no authentication, no scope check) and the
// default one (a bearer token with `stream:append`, checked per request, producer ids scoped by
// principal). Connection admission and the body budget run in both. Alternating rounds in one
// run keeps a shared machine's noise out of the ratio.
// Run: npm run build && node dist/bench/stream-transfer/http-appends.js   (BENCH_QUICK=1 for a short run)
// Prints a human table, then one JSON line: {"bench":"stream-transfer","measure":"http-appends",...}.
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { BearerTokens } from '@baton/http/internal/auth.js';
import { createHttpServer } from '@baton/http/internal/http-server.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { SystemRng } from '@baton/kernel/internal/system-rng.js';
import { createStreamApiApp } from '@baton/stream-transfer/internal/api.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { DataPlaneOptions } from '@baton/stream-transfer/internal/data-access.js';
import { DiskWal } from '@baton/stream-transfer/internal/disk-wal.js';
import { HandoffWatcher } from '@baton/stream-transfer/internal/handoff-watcher.js';
import { MemoryWalDisk } from '@baton/stream-transfer/internal/memory-wal-disk.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { StreamNode } from '@baton/stream-transfer/internal/stream-node.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { MemoryObjectStore } from '@baton/plugin-memory/internal/memory-object-store.js';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = QUICK ? 2 : 5;
const ROUND_MS = QUICK ? 1_000 : 2_000;
const CONCURRENCY = 64;
const TOKEN = 'bench-append-token';

async function startNode(dataPlane: DataPlaneOptions) {
  const clock = new SystemClock();
  const logger = createSilentLogger();
  const consensus = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine());
  const node = new StreamNode(consensus, new MemoryObjectStore(), new DiskWal(new MemoryWalDisk()), clock, logger, { node: 'a' });
  await node.start();
  const watcher = new HandoffWatcher(node);
  watcher.start();
  const tokens = new BearerTokens([{ token: TOKEN, principal: 'bench', scopes: ['stream:append'] }]);
  const app = createStreamApiApp({ node, tokens, clock, rng: new SystemRng(), logger, dataPlane });
  const server = createHttpServer({ app, port: 0, clock });
  const { url } = await server.listen();
  await consensus.propose({ type: 'register-node', node: 'a', address: url, slots: 100 });
  for (let i = 0; i < 8; i++) await consensus.propose({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  // Each stream opens on its owner a moment after its create: wait until each takes an append.
  const agent = new Agent({ keepAlive: false });
  const first = Buffer.from(JSON.stringify({ records: [{ body: 'first' }] }));
  for (let i = 0; i < 8; i++) {
    while ((await post(agent, url, `/v1/streams/s${i}/records`, first, TOKEN)) !== 200) await clock.sleep(10);
  }
  return {
    url,
    stop: async () => {
      await server.stop();
      watcher.stop();
      await node.stop();
    },
  };
}

function post(agent: Agent, url: string, path: string, body: Buffer, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Appends per second of one round, after the streams answer. */
let rounds = 0;

async function round(url: string, token: string | undefined, ms: number): Promise<number> {
  const id = rounds++;
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let done = 0;
  let failed = 0;
  const statuses = new Set<number>();
  let running = true;
  const clock = new SystemClock();
  const started = performance.now();
  const stop = clock.sleep(ms).then(() => (running = false));
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      let seq = 0;
      while (running) {
        const body = Buffer.from(JSON.stringify({ records: Array.from({ length: 10 }, () => ({ body: 'z'.repeat(100) })), producer: { id: `r${id}-p${i}`, seq: seq++ } }));
        const status = await post(agent, url, `/v1/streams/s${i % 8}/records`, body, token);
        if (status === 200) done += 1;
        else failed += 1;
        if (status !== 200) statuses.add(status);
      }
    }),
  );
  await stop;
  agent.destroy();
  if (failed > done / 100) throw new Error(`${failed} appends failed in a round (${done} taken): ${[...statuses].join(', ')}`);
  return done / ((performance.now() - started) / 1000);
}

const open = await startNode({ anonymous: 'append' });
const closed = await startNode({ anonymous: 'none' });
// Warm both up before measuring.
await round(open.url, undefined, 300);
await round(closed.url, TOKEN, 300);
const rates = { open: [] as number[], authenticated: [] as number[] };
for (let i = 0; i < ROUNDS; i++) {
  rates.open.push(await round(open.url, undefined, ROUND_MS));
  rates.authenticated.push(await round(closed.url, TOKEN, ROUND_MS));
}
await open.stop();
await closed.stop();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const result = {
  bench: 'stream-transfer',
  measure: 'http-appends',
  concurrency: CONCURRENCY,
  recordsPerAppend: 10,
  rounds: ROUNDS,
  openAppendsPerSec: Math.round(median(rates.open)),
  authenticatedAppendsPerSec: Math.round(median(rates.authenticated)),
  ratio: Number((median(rates.authenticated) / median(rates.open)).toFixed(3)),
};
console.log('HTTP appends on one node (median of alternating rounds)');
console.log(`  open data plane, no token        ${result.openAppendsPerSec} appends/s`);
console.log(`  token + scope + scoped producer  ${result.authenticatedAppendsPerSec} appends/s`);
console.log(`  authenticated / open             ${result.ratio}`);
console.log(JSON.stringify(result));
