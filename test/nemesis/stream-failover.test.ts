import test from 'ava';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { StreamClient, type AppendAnswer } from '@baton/client';
import { eventually } from '../hosts/eventually.js';
import type { StreamCluster } from './stream/stream-cluster.js';
import { streamClusterForTest } from './stream/cluster-for-test.js';

// Real stream node processes as `baton up` runs them (three Raft voters, WAL and Raft log on
// files, one shared fs object store with link()-based conditional puts), under producers that
// never stop: the owner of their streams is frozen (SIGSTOP) and failed over, or killed for good.

const STREAMS = ['f0', 'f1', 'f2', 'f3'];
/** Generous: a loaded machine takes seconds to elect, renew and move streams. */
const DEADLINE_MS = 90_000;

interface Ack extends AppendAnswer {
  body: string;
}

/** One append POST as the client's fetch saw it: to whom, and in which phase of the fault. */
interface Call {
  origin: string;
  sentIn: Phase;
  answeredIn?: Phase;
  status?: number;
  /** The epoch an acknowledgement names. */
  epoch?: number;
}

type Phase = 'running' | 'stopped' | 'resumed';

/** Producers appending numbered single-record batches to every stream, retrying each until acknowledged. */
class Appenders {
  readonly acks: Ack[] = [];
  readonly calls: Call[] = [];
  phase: Phase = 'running';
  private stopped = false;
  private readonly running: Promise<void>[];
  private readonly clock = new SystemClock();

  constructor(urls: string[], token: string) {
    const recording: typeof fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
      const call: Call | undefined =
        method === 'POST' && url.pathname.endsWith('/records')
          ? { origin: url.origin, sentIn: this.phase }
          : undefined;
      if (call) this.calls.push(call);
      try {
        const response = await fetch(input, init);
        if (call) Object.assign(call, { answeredIn: this.phase, status: response.status });
        if (call && response.ok)
          call.epoch = ((await response.clone().json()) as { epoch?: number }).epoch;
        return response;
      } catch (error) {
        if (call) call.answeredIn = this.phase;
        throw error;
      }
    };
    this.running = STREAMS.map((stream) =>
      this.produce(
        stream,
        new StreamClient({ nodes: urls, token, fetch: recording, maxUnavailableRetries: 5 }),
      ),
    );
  }

  private async produce(stream: string, client: StreamClient): Promise<void> {
    for (let seq = 0; !this.stopped;) {
      const body = `${stream}:${seq}`;
      try {
        const answer = await client.append(stream, [body], { id: `w-${stream}`, seq });
        this.acks.push({ ...answer, body });
        seq += 1;
      } catch {
        // Unavailable, or a node gone: the same batch again, with the same sequence number.
        await this.clock.sleep(50);
      }
    }
  }

  ackedBy(stream: string, predicate: (ack: Ack) => boolean): boolean {
    return this.acks.some((a) => a.stream === stream && predicate(a));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
  }
}

/** Three nodes; the run's directory (every member's log) is kept when the test fails. */
function cluster(t: import('ava').ExecutionContext, seed: number, liveness?: Record<string, unknown>): Promise<StreamCluster> {
  // The node's own liveness defaults, over the quicker ones the nemesis runs use.
  return streamClusterForTest(t, { name: 'failover', seed }, { liveness: liveness ?? {} });
}

/** A node that is not the metadata leader (so the metadata keeps its leader when it goes). */
async function victimOf(c: StreamCluster): Promise<string> {
  const leader = await c.leader();
  return c.members.map((m) => m.id).find((id) => id !== leader)!;
}

function admin(c: StreamCluster, except: string): StreamClient {
  return new StreamClient({
    nodes: Object.entries(c.urls)
      .filter(([id]) => id !== except)
      .map(([, url]) => url),
    token: c.token,
  });
}

/** A cluster whose every stream lives on one node that is not the metadata leader, with producers appending to them. */
async function producingOnVictim(
  t: import('ava').ExecutionContext,
  seed: number,
  liveness?: Record<string, unknown>,
) {
  const c = await cluster(t, seed, liveness);
  const victim = await victimOf(c);
  const ops = admin(c, victim);
  for (const stream of STREAMS) await ops.createStream(stream, victim);
  const appenders = new Appenders(Object.values(c.urls), c.token);
  t.teardown(() => appenders.stop());
  return { c, victim, ops, appenders };
}

async function livenessOf(client: StreamClient, node: string): Promise<string | undefined> {
  return (await client.nodes()).nodes.find((n) => n.id === node)?.liveness;
}

/** Every acknowledged record is readable exactly once, at the offset it was given, with no gaps. */
async function checkAcknowledged(
  t: import('ava').ExecutionContext,
  client: StreamClient,
  acks: Ack[],
): Promise<void> {
  for (const stream of STREAMS) {
    const records: { offset: number; body: string }[] = [];
    for (;;) {
      const page = await client.read(stream, records.length, 1000);
      if (page.records.length === 0) break;
      records.push(...page.records);
    }
    t.deepEqual(
      records.map((r) => r.offset),
      records.map((_, i) => i),
      `${stream}: offsets in order without gaps`,
    );
    t.is(
      new Set(records.map((r) => r.body)).size,
      records.length,
      `${stream}: no record stored twice`,
    );
    for (const ack of acks.filter((a) => a.stream === stream)) {
      t.is(
        records[ack.first]?.body,
        ack.body,
        `${ack.body} acknowledged by ${ack.node} at ${stream}/${ack.first}`,
      );
    }
  }
}

test.serial(
  'a frozen owner (SIGSTOP) is failed over by the operator; resumed, it acknowledges nothing under a newer epoch nor anything it took after its lease lapsed, every acknowledged record is readable, and the producers carry on at the new owner',
  async (t) => {
    t.timeout(6 * DEADLINE_MS);
    // Automatic failover is pushed far out, so the operator's failover is the one that moves the streams.
    const { c, victim, ops, appenders } = await producingOnVictim(t, 91_501, {
      autoFailoverAfterMs: 600_000,
    });
    await eventually(
      () =>
        STREAMS.every(
          (s) => appenders.acks.filter((a) => a.stream === s && a.node === victim).length >= 5,
        ),
      `every stream to take appends on ${victim}`,
      DEADLINE_MS,
    );
    const victimProcess = c.members.find((m) => m.id === victim)!.process;
    appenders.phase = 'stopped';
    victimProcess.pause();
    await eventually(
      async () => (await livenessOf(ops, victim)) === 'Dead',
      `${victim} to be published Dead`,
      DEADLINE_MS,
    );
    const failover = await ops.failover(victim);
    t.is(failover.moved, STREAMS.length, 'every stream of the frozen node moved');
    const lostEpoch = Math.max(
      ...appenders.acks.filter((a) => a.node === victim).map((a) => a.epoch),
    );
    appenders.phase = 'resumed';
    victimProcess.resume();
    await eventually(
      () =>
        STREAMS.every((s) => appenders.ackedBy(s, (a) => a.node !== victim && a.epoch > lostEpoch)),
      'every producer to carry on at the new owner',
      DEADLINE_MS,
    );
    // The producers were waiting on the frozen node: their requests were answered once it resumed.
    const inFlight = appenders.calls.filter(
      (call) =>
        call.origin === new URL(c.urls[victim]).origin &&
        call.sentIn !== 'resumed' &&
        call.answeredIn === 'resumed',
    );
    t.true(inFlight.length >= 1, 'appends were in flight on the frozen node');
    // What it took after its lease lapsed is refused. Only an append it had stored and decided
    // to acknowledge before the pause can still be answered 200 once it resumes (the pause may
    // land between that decision and the socket write): under the lost epoch, and its record is
    // readable at the new owner (checked below with every acknowledgement).
    for (const call of inFlight)
      if (call.status !== undefined && call.status < 300)
        t.true(
          call.epoch !== undefined && call.epoch <= lostEpoch,
          `an in-flight append was answered ${call.status} under epoch ${call.epoch}, after the lost epoch ${lostEpoch}`,
        );
    t.false(
      appenders.acks.some((a) => a.node === victim && a.epoch > lostEpoch),
      'the resumed node never served the streams again',
    );
    // It learns it lost them, and rejoins empty and Alive.
    await eventually(
      async () => (await livenessOf(ops, victim)) === 'Alive',
      `${victim} to rejoin Alive`,
      DEADLINE_MS,
    );
    t.is((await ops.node(victim)).owned, 0);
    await appenders.stop();
    await checkAcknowledged(t, ops, appenders.acks);
  },
);

/**
 * Kills the owner of every stream for good (kill -9): automatic failover moves its streams, no
 * transfer is left waiting on it, the producers carry on elsewhere and every acknowledged record
 * is readable.
 */
async function killedOwnerIsFailedOver(t: import('ava').ExecutionContext, seed: number, liveness?: Record<string, unknown>): Promise<void> {
  t.timeout(6 * DEADLINE_MS);
  const { c, victim, ops, appenders } = await producingOnVictim(t, seed, liveness);
  await eventually(
    () => STREAMS.every((s) => appenders.ackedBy(s, (a) => a.node === victim)),
    `every stream to take appends on ${victim}`,
    DEADLINE_MS,
  );
  await c.members.find((m) => m.id === victim)!.process.kill();
  const ackedBeforeKill = appenders.acks.length;
  await eventually(
    async () => (await ops.streams()).streams.every((s) => s.owner !== victim),
    `automatic failover to move every stream off ${victim}`,
    DEADLINE_MS,
  );
  t.is(await livenessOf(ops, victim), 'Dead');
  t.deepEqual(
    await ops.transfers(),
    { transfers: [] },
    'no transfer left waiting on the dead node',
  );
  await eventually(
    () =>
      STREAMS.every((s) =>
        appenders.acks.slice(ackedBeforeKill).some((a) => a.stream === s && a.node !== victim),
      ),
    'every producer to carry on elsewhere',
    DEADLINE_MS,
  );
  await appenders.stop();
  await checkAcknowledged(t, ops, appenders.acks);
}

test.serial('a node killed for good (kill -9) has its streams moved by automatic failover, with the default thresholds', (t) =>
  killedOwnerIsFailedOver(t, 91_502),
);

/** The adaptive preset of node-liveness.ts, as a host config gives it. */
const ADAPTIVE = {
  renewEveryMs: 200,
  suspectAfterMs: 600,
  deadAfterMs: 3_000,
  autoFailoverAfterMs: 0,
  detector: { kind: 'phi' },
};
const PAUSES = Number(process.env.FAILOVER_PAUSES ?? 100);

test.serial(
  `with the phi detector, ${PAUSES} pauses of 400 ms (SIGSTOP) of a healthy owner fail nothing over: no Dead verdict, every stream where it was at its epoch, every acknowledged record readable`,
  async (t) => {
    t.timeout(6 * DEADLINE_MS);
    const { c, victim, ops, appenders } = await producingOnVictim(t, 91_503, ADAPTIVE);
    await eventually(
      () => STREAMS.every((s) => appenders.ackedBy(s, (a) => a.node === victim)),
      `every stream to take appends on ${victim}`,
      DEADLINE_MS,
    );
    const placed = (await ops.streams()).streams.map((s) => ({
      stream: s.stream,
      owner: s.owner,
      epoch: s.epoch,
    }));
    const verdicts = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      const clock = new SystemClock();
      while (sampling) {
        const liveness = await livenessOf(ops, victim).catch(() => undefined);
        if (liveness) verdicts.add(liveness);
        await clock.sleep(100);
      }
    })();
    const victimProcess = c.members.find((m) => m.id === victim)!.process;
    const clock = new SystemClock();
    for (let pause = 0; pause < PAUSES; pause++) {
      // The fault itself lasts 400 ms; then the node runs 400 ms before the next one.
      victimProcess.pause();
      await clock.sleep(400);
      victimProcess.resume();
      await clock.sleep(400);
    }
    sampling = false;
    await sampler;
    t.false(
      verdicts.has('Dead'),
      `${victim} was never published Dead (seen: ${[...verdicts].join(', ')})`,
    );
    t.deepEqual(
      (await ops.streams()).streams.map((s) => ({
        stream: s.stream,
        owner: s.owner,
        epoch: s.epoch,
      })),
      placed,
      'no stream moved: no failover happened',
    );
    await appenders.stop();
    await checkAcknowledged(t, ops, appenders.acks);
  },
);

test.serial(
  'with the phi detector, a node killed for good (kill -9) has its streams moved by automatic failover and the producers carry on elsewhere',
  (t) => killedOwnerIsFailedOver(t, 91_504, ADAPTIVE),
);
