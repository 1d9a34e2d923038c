import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPorts } from '@baton/cli/internal/local-cluster/free-ports.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import type { KvCommand, KvResult } from '@baton/conformance/internal/kv-state-machine.js';
import {
  checkLinearizability,
  describeIllegal,
  type Operation,
} from '@baton/conformance/internal/linearizability/index.js';
import { kvRegisterModel } from '@baton/conformance/internal/linearizability/kv-register-model.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { eventually } from '../../hosts/eventually.js';
import { FAST } from '../../plugins/etcd/etcd-fixture.js';
import {
  READY_TIMEOUT_MS,
  prepareMember,
  processOf,
  type ClusterMember,
  type NemesisCluster,
} from '../cluster.js';
import { etcdFaults } from '../etcd-faults.js';
import { firewallFor, type Firewall } from '../firewall.js';
import { callJson } from '../http-json.js';
import { memberIdentities } from '../member-identity.js';
import { peerCredentials } from '../peer-credentials.js';
import type { OperationLog } from '../operation-log.js';
import type { Workload } from '../run-nemesis.js';

const ENTRY = fileURLToPath(new URL('./register-node.js', import.meta.url));
const CLIENTS = 5;
/** Keys in use at a time; each is retired after this many operations, as Jepsen's independent keys. */
const KEY_SLOTS = 4;
const OPS_PER_KEY = 80;
/** A client gives up on an answer after this long: the operation is then unknown. */
const CLIENT_TIMEOUT_MS = 2_000;

interface StateAnswer {
  applied: { term: number; index: number };
  commandsApplied: number;
  data: Record<string, string>;
}

/** What the register is replicated by: the members' own Raft, or a log in a real 3-member etcd. */
export type RegisterConsensus = 'raft' | 'etcd';

/**
 * The consensus workload: clients put, get and compare-and-set registers through random members
 * of a Raft over HTTP (real processes, file storage, snapshots every few hundred entries), while
 * the nemesis kills, pauses and partitions them. On etcd the members keep the register in a log
 * in a real 3-member etcd instead and never talk to each other: partitions between them cut
 * nothing, so the nemesis kills and pauses them and the etcd faults take their place (an etcd
 * member killed or paused, a member cut off from etcd). Checked: the history (with a final read
 * of every key after healing) is linearizable for the register model, and every member applies
 * the same state.
 */
export function registerWorkload(consensus: RegisterConsensus = 'raft'): Workload {
  let members: ClusterMember[] = [];
  let firewall: Firewall | undefined;
  let etcd: EtcdCluster | undefined;
  const token = randomBytes(16).toString('hex');
  let urls: Record<string, string> = {};
  const keys = new KeyRotation();

  const stateOf = async (id: string): Promise<StateAnswer | undefined> => {
    const r = await callJson(`${urls[id]}/state`, { token, timeoutMs: 1000 });
    return r.kind === 'answer' && r.status === 200 ? (r.body as StateAnswer) : undefined;
  };

  return {
    name: consensus === 'etcd' ? 'register-etcd' : 'register',
    testFile:
      consensus === 'etcd'
        ? 'dist/test/nemesis/register-etcd.test.js'
        : 'dist/test/nemesis/register.test.js',
    progressOps: ['put', 'cas', 'get'],

    async start(ctx) {
      const ids = Array.from({ length: ctx.members }, (_, i) => `m${i + 1}`);
      const ports = await freeLoopbackPorts(ids.length);
      urls = Object.fromEntries(ids.map((id, i) => [id, `http://127.0.0.1:${ports[i]}`]));
      const identities = memberIdentities(ids.length);
      const peerAuth = peerCredentials(ids);
      if (consensus === 'etcd') etcd = await EtcdCluster.start({ size: 3 });
      members = await Promise.all(
        ids.map((id, i) =>
          prepareMember({
            id,
            dir: join(ctx.dir, id),
            ports: [ports[i]],
            entryPoint: ENTRY,
            identity: identities?.[i],
            config: {
              member: id,
              voters: ids,
              peers: urls,
              port: ports[i],
              dataDir: join(ctx.dir, id, 'raft'),
              peerAuth: peerAuth(id),
              token,
              // Snapshots every few hundred entries, so restarts and lagging followers go through them.
              raft: { snapshotInterval: 200, snapshotRetain: 20 },
              ...(etcd && {
                etcd: {
                  endpoints: etcd.endpoints,
                  prefix: `register-${ctx.seed}/`,
                  // A lost leader is replaced after its 2 s lease; snapshots as often as on Raft.
                  ...FAST,
                  snapshotEveryEntries: 200,
                  retainEntriesAfterSnapshot: 20,
                },
              }),
            },
          }),
        ),
      );
      const opened = await firewallFor(identities, `register-${ctx.seed}`);
      firewall = opened.firewall;
      for (const member of members) member.process.start();
      const cluster: NemesisCluster = {
        members,
        // On etcd the members never talk to each other: only a cut from etcd (below) parts them.
        firewall: etcd ? undefined : firewall,
        partitionsUnavailable: etcd
          ? 'the members talk to etcd alone (etcd-cut cuts one off from it instead)'
          : opened.partitionsUnavailable,
        storeOutages: [],
        faults: etcd ? etcdFaults(members, firewall, etcd, ctx.rng.fork('etcd')) : undefined,
        leader: () => leaderOf(urls, token),
        waitReady: (id) =>
          eventually(
            async () => (await stateOf(id)) !== undefined,
            `register member ${id} to answer`,
            READY_TIMEOUT_MS,
          ),
      };
      for (const id of ids) await processOf(members, id).whileRunning(cluster.waitReady(id));
      await eventually(
        async () => (await cluster.leader()) !== undefined,
        'a register leader',
        READY_TIMEOUT_MS,
      );
      return cluster;
    },

    clients(ctx, signal) {
      return Array.from({ length: CLIENTS }, (_, c) =>
        runClient(`c${c}`, ctx.rng.fork(`client-${c}`), ctx.log, urls, token, keys, signal),
      );
    },

    async check(ctx) {
      const problems: string[] = [];
      // A final read of every key used, after healing: a lost acknowledged write shows here.
      const ids = Object.keys(urls);
      for (const key of keys.used()) {
        for (let attempt = 0; attempt < 5; attempt++) {
          const member = ctx.rng.pick(ids);
          const pending = ctx.log.invoke<KvCommand, KvResult>('final', 'get', { op: 'get', key });
          const answer = await callJson(`${urls[member]}/kv`, {
            body: { op: 'get', key },
            token,
            timeoutMs: 5_000,
          });
          if ((await settle(pending, answer, member)) !== undefined) break;
        }
      }
      const history = registerHistory(ctx.log);
      const result = checkLinearizability(kvRegisterModel, history, {
        maxStepsPerPartition: 2_000_000,
      });
      if (result.outcome === 'illegal')
        problems.push(describeIllegal(kvRegisterModel, result).split('\n').slice(0, 40).join('\n'));
      if (result.outcome === 'unknown')
        problems.push(
          `the linearizability checker could not decide within its budget (${result.steps} steps over ${result.partitions} keys)`,
        );
      try {
        await eventually(
          async () => {
            const states = await Promise.all(ids.map(stateOf));
            if (states.some((s) => s === undefined)) return false;
            const first = JSON.stringify(states[0]);
            return states.every((s) => JSON.stringify(s) === first);
          },
          'every member to apply the same state',
          20_000,
        );
      } catch (error) {
        const states = await Promise.all(
          ids.map(async (id) => `${id}: ${JSON.stringify(await stateOf(id))?.slice(0, 300)}`),
        );
        problems.push(
          `members did not converge after healing: ${(error as Error).message}\n${states.join('\n')}`,
        );
      }
      return problems;
    },

    async stop() {
      await firewall?.heal();
      await Promise.all(members.map((m) => m.process.stop()));
      await etcd?.close();
    },
  };
}

/** The register operations of a run as the checker takes them: fail left out, unknown without a return. */
export function registerHistory(log: OperationLog): Array<Operation<KvCommand, KvResult>> {
  const ops: Array<Operation<KvCommand, KvResult>> = [];
  for (const r of log.records) {
    if (!['put', 'get', 'cas'].includes(r.f) || r.outcome === 'fail') continue;
    const op: Operation<KvCommand, KvResult> = {
      client: r.client,
      input: r.input as KvCommand,
      call: r.invokeSeq,
    };
    if (r.outcome === 'ok') {
      op.output = r.output as KvResult;
      op.return = r.completeSeq;
    }
    ops.push(op);
  }
  return ops;
}

/** Hands out keys so that none carries more than OPS_PER_KEY operations: the checker stays fast. */
class KeyRotation {
  private readonly generation = new Array<number>(KEY_SLOTS).fill(0);
  private readonly count = new Array<number>(KEY_SLOTS).fill(0);
  private readonly seen = new Set<string>();

  next(rng: SeededRng): string {
    const slot = rng.int(KEY_SLOTS);
    if (++this.count[slot] > OPS_PER_KEY) {
      this.generation[slot] += 1;
      this.count[slot] = 1;
    }
    const key = `k${slot}.${this.generation[slot]}`;
    this.seen.add(key);
    return key;
  }

  used(): string[] {
    return [...this.seen];
  }
}

async function runClient(
  client: string,
  rng: SeededRng,
  log: OperationLog,
  urls: Record<string, string>,
  token: string,
  keys: KeyRotation,
  signal: AbortSignal,
): Promise<void> {
  const clock = new SystemClock();
  const ids = Object.keys(urls);
  const lastSeen = new Map<string, string | null>();
  let n = 0;
  while (!signal.aborted) {
    const key = keys.next(rng);
    const roll = rng.next();
    const value = `${client}-${n++}`;
    const command: KvCommand =
      roll < 0.4
        ? { op: 'get', key }
        : roll < 0.7
          ? { op: 'put', key, value }
          : { op: 'cas', key, expected: lastSeen.get(key) ?? null, value };
    const member = rng.pick(ids);
    const pending = log.invoke<KvCommand, KvResult>(client, command.op, command);
    const answer = await callJson(`${urls[member]}/kv`, {
      body: command,
      token,
      timeoutMs: CLIENT_TIMEOUT_MS,
    });
    const result = await settle(pending, answer, member);
    if (result?.op === 'get') lastSeen.set(key, result.value);
    if (result?.op === 'cas') lastSeen.set(key, result.value);
    if (result?.op === 'put') lastSeen.set(key, value);
    await clock.sleep(5 + rng.int(20));
  }
}

async function settle(
  pending: ReturnType<OperationLog['invoke']>,
  answer: Awaited<ReturnType<typeof callJson>>,
  member = '',
): Promise<KvResult | undefined> {
  if (answer.kind === 'refused') pending.fail(`${member} ${answer.reason}`);
  else if (answer.kind === 'lost') pending.unknown(`${member} ${answer.reason}`);
  else if (answer.status === 200) {
    pending.ok(answer.body.result, member);
    return answer.body.result as KvResult;
  } else if (answer.status === 503 && answer.body?.outcome === 'not_appended')
    pending.fail(`${member} not appended: ${answer.body.reason}`);
  else
    pending.unknown(
      `${member} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`,
    );
  return undefined;
}

async function leaderOf(urls: Record<string, string>, token: string): Promise<string | undefined> {
  const answers = await Promise.all(
    Object.entries(urls).map(async ([id, url]) => {
      const r = await callJson(`${url}/leadership`, { token, timeoutMs: 500 });
      return r.kind === 'answer' && r.status === 200
        ? { id, ...(r.body as { isLeader: boolean; term: number }) }
        : undefined;
    }),
  );
  const leaders = answers.filter((a) => a?.isLeader).sort((a, b) => b!.term - a!.term);
  return leaders[0]?.id;
}
