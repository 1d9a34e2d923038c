#!/usr/bin/env node
// A test host for the consensus workload: `node dist/test/nemesis/register/register-node.js CONFIG.json`.
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { CLOCK } from '@baton/contracts/internal/clock.js';
import { LOGGER } from '@baton/contracts/internal/logger.js';
import {
  METADATA_CONSENSUS,
  NotAppendedError,
  OutcomeUnknownError,
  STATE_MACHINE,
  type MetadataConsensus,
} from '@baton/contracts/internal/metadata-consensus.js';
import { RNG } from '@baton/contracts/internal/rng.js';
import { token } from '@baton/contracts/internal/token.js';
import { createApiApp } from '@baton/http/internal/api-app.js';
import { BearerTokens, requireScope } from '@baton/http/internal/auth.js';
import { HttpServer } from '@baton/http/internal/http-server.js';
import { peerAuthConfigSchema } from '@baton/http/internal/peer-auth.js';
import { peerAuthPlugin } from '@baton/http/internal/peer-auth-plugin.js';
import { readValidBody } from '@baton/http/internal/json-body.js';
import { serveRouter } from '@baton/http/internal/routes.js';
import { loadConfig } from '@baton/kernel/internal/config.js';
import { createHost } from '@baton/kernel/internal/host.js';
import { runHostProcess } from '@baton/kernel/internal/host-process.js';
import { definePlugin } from '@baton/kernel/internal/plugin.js';
import { systemDefaults } from '@baton/kernel/internal/system-plugins.js';
import { pinoLoggerPlugin } from '@baton/plugin-pino/internal/plugin.js';
import {
  kvStateMachine,
  type KvCommand,
  type KvResult,
  type KvState,
} from '@baton/conformance/internal/kv-state-machine.js';
import { etcdConsensusPlugin } from '@baton/plugin-etcd/internal/plugin.js';
import { httpPeerTransportPlugin, raftConsensusPlugin } from '@baton/plugin-raft/internal/plugin.js';
import { RAFT_PEER_ROUTER } from '@baton/plugin-raft/internal/transport-http.js';

/**
 * One member of a replicated register: the consensus conformance suite's key-value state
 * machine on plugins/raft over HTTP with file storage, or with `etcd` in the config on
 * plugins/etcd (a log in an etcd cluster the members share, no traffic between members), and a
 * small client API on the same listener:
 * - POST /kv {op, key, value?, expected?}: proposes the command; 200 with the result, 503
 *   `not_appended` when it certainly took no effect, 504 `unknown` when it may have;
 * - GET /state: the applied view (position, commands applied, the data), for convergence checks;
 * - GET /leadership.
 * The client API needs the bearer token of the config; Raft traffic the members' peer credentials.
 */
const registerNodeConfig = z
  .object({
    member: z.string().min(1),
    voters: z.array(z.string().min(1)).min(1),
    peers: z.record(z.string(), z.url()),
    port: z.number().int().positive(),
    dataDir: z.string().min(1),
    peerAuth: peerAuthConfigSchema,
    token: z.string().min(16),
    /** Raft tick, election and proposal timing: short, so faults show within a short run. */
    raft: z.record(z.string(), z.unknown()).default({}),
    /**
     * Options of the etcd consensus (endpoints, prefix, timeouts; this member's id and the voters
     * are filled in): with them the register lives in etcd instead of the members' own Raft.
     */
    etcd: z.record(z.string(), z.unknown()).optional(),
    /** How long the client API waits for a proposal's decision. */
    proposeTimeoutMs: z.number().int().positive().default(1500),
  })
  .strict();
type RegisterNodeConfig = z.output<typeof registerNodeConfig>;

type Register = MetadataConsensus<KvState, KvCommand, KvResult>;

const commandSchema = z.discriminatedUnion('op', [
  z
    .object({ op: z.literal('put'), key: z.string().min(1).max(64), value: z.string().max(256) })
    .strict(),
  z.object({ op: z.literal('get'), key: z.string().min(1).max(64) }).strict(),
  z
    .object({
      op: z.literal('cas'),
      key: z.string().min(1).max(64),
      expected: z.string().max(256).nullable(),
      value: z.string().max(256),
    })
    .strict(),
]);

const REGISTER_API = token<HttpServer>('RegisterApi');
/** What members send each other, served on the client listener: Raft's routes, none on etcd. */
const PEER_ROUTES = token<Middleware[]>('RegisterPeerRoutes');

const raftPeerRoutesPlugin = definePlugin({
  id: 'register-raft-peer-routes',
  provides: [PEER_ROUTES],
  requires: [RAFT_PEER_ROUTER],
  options: z.object({}).strict(),
  register: (ctx) =>
    ctx.provide(PEER_ROUTES, {
      useFactory: (resolve) => [serveRouter(resolve(RAFT_PEER_ROUTER))],
    }),
});

const registerApiPlugin = definePlugin({
  id: 'register-api',
  provides: [REGISTER_API],
  requires: [METADATA_CONSENSUS, PEER_ROUTES, CLOCK, RNG, LOGGER],
  options: z.object({
    port: z.number().int().positive(),
    token: z.string().min(16),
    proposeTimeoutMs: z.number().int().positive(),
  }),
  register: (ctx) =>
    ctx.provide(REGISTER_API, {
      useFactory: (resolve) => {
        const register = resolve(METADATA_CONSENSUS) as Register;
        const clock = resolve(CLOCK);
        const logger = resolve(LOGGER);
        const app = createApiApp({
          clock,
          rng: resolve(RNG),
          logger,
          tokens: new BearerTokens([
            { token: ctx.options.token, principal: 'client', scopes: ['register'] },
          ]),
        });
        for (const routes of resolve(PEER_ROUTES)) app.use(routes);
        app.use(serveRouter(clientRouter(register, ctx.options.proposeTimeoutMs)));
        return new HttpServer({ app, port: ctx.options.port, clock, logger, name: 'register' });
      },
    }),
});

function clientRouter(register: Register, timeoutMs: number): Router {
  const router = new Router();
  router.use(requireScope('register'));
  router.post('/kv', async (ctx) => {
    const command = (await readValidBody(ctx, commandSchema)) as KvCommand;
    try {
      const receipt = await register.propose(command, { timeoutMs });
      ctx.body = { result: receipt.result, position: receipt.position };
    } catch (error) {
      if (error instanceof NotAppendedError) {
        ctx.status = 503;
        ctx.body = { outcome: 'not_appended', reason: error.reason };
      } else if (error instanceof OutcomeUnknownError) {
        ctx.status = 504;
        ctx.body = { outcome: 'unknown', reason: error.reason };
      } else throw error;
    }
  });
  router.get('/state', (ctx) => {
    const { state, applied } = register.view();
    ctx.body = { applied, commandsApplied: state.commandsApplied, data: state.data };
  });
  router.get('/leadership', (ctx) => {
    ctx.body = register.leadership();
  });
  return router;
}

async function startRegisterNode(config: RegisterNodeConfig) {
  const builder = createHost(systemDefaults)
    .add(pinoLoggerPlugin, { level: 'info', pretty: false })
    .value(STATE_MACHINE, kvStateMachine);
  if (config.etcd)
    builder
      .add(etcdConsensusPlugin, {
        memberId: config.member,
        initialVoters: config.voters,
        ...config.etcd,
      })
      .value(PEER_ROUTES, []);
  else
    builder
      .add(peerAuthPlugin, {
        self: config.member,
        peers: config.voters,
        peerAuth: config.peerAuth,
      })
      .add(httpPeerTransportPlugin, { member: config.member, peers: config.peers })
      .add(raftConsensusPlugin, {
        member: config.member,
        voters: config.voters,
        dataDir: config.dataDir,
        tickMs: 10,
        electionTicks: 20,
        heartbeatTicks: 3,
        proposeTimeoutMs: config.proposeTimeoutMs,
        ...config.raft,
      })
      .add(raftPeerRoutesPlugin);
  const host = builder
    .add(registerApiPlugin, {
      port: config.port,
      token: config.token,
      proposeTimeoutMs: config.proposeTimeoutMs,
    })
    .build();
  await host.start();
  return host;
}

await runHostProcess({
  name: 'register node',
  entryPoint: 'dist/test/nemesis/register/register-node.js',
  start: async (file) => {
    const config = await loadConfig(registerNodeConfig, { file });
    const host = await startRegisterNode(config);
    return { host, listening: `register node ${config.member} listening on port ${config.port}` };
  },
});
