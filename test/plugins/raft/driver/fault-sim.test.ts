import test from 'ava';
import { NotAppendedError, OutcomeUnknownError, ReadUnavailableError } from '@baton/contracts/internal/metadata-consensus.js';
import type { KvCommand, KvResult } from '@baton/conformance/internal/kv-state-machine.js';
import { checkLinearizability, describeIllegal } from '@baton/conformance/internal/linearizability/checker.js';
import { HistoryRecorder } from '@baton/conformance/internal/linearizability/history.js';
import { kvRegisterModel } from '@baton/conformance/internal/linearizability/kv-register-model.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { SimCluster } from '../support/sim-cluster.js';
import { piecewiseKv } from '../support/piecewise-kv.js';

// Clients on every member issue puts, gets, compare-and-sets and linearizable reads while the
// network drops, duplicates and reorders, partitions come and go, and members crash and
// restart from their storage. Afterwards: every operation got a terminal answer, the history
// is linearizable (unknown outcomes allowed), and all members converge on one state.
// Even seeds replicate a state machine whose snapshots cross in many pieces (one key each),
// so chunked snapshot transfers meet the same faults.
// DRIVER_SIM_SEED=S replays one seed; DRIVER_SIM_SEEDS=N runs more.
const only = process.env.DRIVER_SIM_SEED;
const count = Number(process.env.DRIVER_SIM_SEEDS ?? 12);
const seeds = only !== undefined ? [Number(only)] : Array.from({ length: count }, (_, i) => i + 1);
const ids = ['n1', 'n2', 'n3'];

for (const seed of seeds) {
  test(`driver under faults stays linearizable and answers every operation (seed ${seed})`, async (t) => {
    const replay = `DRIVER_SIM_SEED=${seed} npx ava dist/test/plugins/raft/driver/fault-sim.test.js`;
    const rng = new SeededRng(seed * 7919);
    const c = new SimCluster(ids, { snapshotInterval: 20, snapshotRetain: 5, proposeTimeoutMs: 2_000, readTimeoutMs: 2_000 }, seed, {
      dropProbability: rng.pick([0, 0.05, 0.15]),
      duplicateProbability: rng.pick([0, 0.05]),
      minDelayMs: 1,
      maxDelayMs: rng.pick([3, 15, 40]),
    }, seed % 2 === 0 ? piecewiseKv(1) : undefined);
    await c.startAll();
    const recorder = new HistoryRecorder<KvCommand, KvResult>();
    const down = new Set<string>();
    let outstanding = 0;
    let answered = 0;
    const client = async (n: number) => {
      const crng = rng.fork(`client-${n}`);
      for (let k = 0; k < 25; k++) {
        const up = ids.filter((id) => !down.has(id) && c.members.has(id));
        if (up.length === 0) {
          await c.clock.sleep(50);
          continue;
        }
        const member = c.get(crng.pick(up));
        const key = crng.pick(['a', 'b']);
        const kind = crng.int(5);
        const input: KvCommand =
          kind === 0 || kind === 4 ? { op: 'get', key } : kind === 1 ? { op: 'cas', key, expected: crng.chance(0.5) ? null : `v${crng.int(5)}`, value: `v${crng.int(5)}` } : { op: 'put', key, value: `c${n}-${k}` };
        const op = recorder.invoke(n, input);
        outstanding++;
        try {
          if (kind === 4 || (kind === 0 && crng.chance(0.5))) {
            const view = await member.read({ timeoutMs: 1_500 });
            op.ok({ op: 'get', value: view.state.data[key] ?? null });
          } else {
            const receipt = await member.propose(input, { idempotencyKey: `c${n}-${k}`, timeoutMs: 1_500 });
            op.ok(receipt.result);
          }
        } catch (error) {
          if (error instanceof NotAppendedError || error instanceof ReadUnavailableError) op.failed();
          else if (error instanceof OutcomeUnknownError) op.unknown();
          else throw error;
        } finally {
          outstanding--;
          answered++;
        }
        await c.clock.sleep(crng.int(30));
      }
    };
    const faults = async () => {
      const frng = rng.fork('faults');
      for (let i = 0; i < 12; i++) {
        await c.clock.sleep(100 + frng.int(300));
        const roll = frng.int(4);
        const victim = frng.pick(ids);
        if (roll === 0) c.network.partition([victim], ids.filter((id) => id !== victim));
        else if (roll === 1) c.network.heal();
        else if (roll === 2 && !down.has(victim) && down.size === 0) {
          down.add(victim);
          await c.crash(victim);
          await c.clock.sleep(50 + frng.int(300));
          await c.start(victim);
          down.delete(victim);
        } else if (roll === 3) {
          c.network.pause(victim);
          await c.clock.sleep(frng.int(200));
          c.network.resume(victim);
        }
      }
      c.network.heal();
    };
    const clients = Promise.all([0, 1, 2, 3, 4, 5].map(client));
    const done = Promise.all([clients, faults()]);
    let finished = false;
    done.then(() => (finished = true), () => (finished = true));
    try {
      await c.until(() => finished, 120_000, `every client operation to get an answer (${outstanding} outstanding); replay: ${replay}`);
      await done;
      t.is(outstanding, 0);
      t.is(answered, 6 * 25);
      const history = recorder.history();
      const result = checkLinearizability(kvRegisterModel, history);
      t.is(result.outcome, 'ok', `${describeIllegal(kvRegisterModel, result)}\nreplay: ${replay}`);
      // Liveness after healing: one leader, everyone converges.
      const leader = await c.waitForLeader(10_000);
      const final = await c.settle(leader.propose({ op: 'put', key: 'final', value: 'x' }));
      await c.until(() => ids.every((id) => c.get(id).view().applied.index >= final.position.index), 10_000, `convergence; replay: ${replay}`);
      const states = ids.map((id) => JSON.stringify(c.get(id).view().state.data));
      t.true(states.every((s) => s === states[0]), `members diverged; replay: ${replay}`);
    } finally {
      await c.stopAll();
    }
  });
}
