import test from 'ava';
import type { KvCommand, KvResult } from '@baton/conformance/internal/kv-state-machine.js';
import {
  checkLinearizability,
  describeIllegal,
} from '@baton/conformance/internal/linearizability/checker.js';
import {
  HistoryRecorder,
  type Operation,
} from '@baton/conformance/internal/linearizability/history.js';
import { kvRegisterModel } from '@baton/conformance/internal/linearizability/kv-register-model.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';

type Op = Operation<KvCommand, KvResult>;

const put = (
  client: number,
  key: string,
  value: string,
  call: number,
  ret: number | undefined,
  previous: string | null | undefined,
): Op => ({
  client,
  input: { op: 'put', key, value },
  call,
  return: ret,
  output: previous === undefined ? undefined : { op: 'put', previous },
});
const get = (client: number, key: string, call: number, ret: number, value: string | null): Op => ({
  client,
  input: { op: 'get', key },
  call,
  return: ret,
  output: { op: 'get', value },
});
const cas = (
  client: number,
  key: string,
  expected: string | null,
  value: string,
  call: number,
  ret: number,
  ok: boolean,
  now: string | null,
): Op => ({
  client,
  input: { op: 'cas', key, expected, value },
  call,
  return: ret,
  output: { op: 'cas', ok, value: now },
});
const check = (history: Op[]) => checkLinearizability(kvRegisterModel, history);

test('a sequential legal history is linearizable', (t) => {
  const result = check([
    put(1, 'x', 'a', 0, 1, null),
    get(2, 'x', 2, 3, 'a'),
    cas(1, 'x', 'a', 'b', 4, 5, true, 'b'),
    get(2, 'x', 6, 7, 'b'),
  ]);
  t.is(result.outcome, 'ok');
});

test('a stale read after a completed write is rejected, and the report names the operations', (t) => {
  const history = [put(1, 'x', 'a', 0, 1, null), get(2, 'x', 2, 3, null)];
  const result = check(history);
  t.is(result.outcome, 'illegal');
  const report = describeIllegal(kvRegisterModel, result);
  t.regex(report, /put\(x, a\)/);
  t.regex(report, /get\(x\) -> {"op":"get","value":null}/);
});

test('a read that returns an older of two completed writes is rejected', (t) => {
  t.is(
    check([put(1, 'x', 'a', 0, 1, null), put(1, 'x', 'b', 2, 3, 'a'), get(2, 'x', 4, 5, 'a')])
      .outcome,
    'illegal',
  );
});

test('a read concurrent with a write may see either value', (t) => {
  t.is(check([put(1, 'x', 'a', 0, 10, null), get(2, 'x', 1, 2, null)]).outcome, 'ok');
  t.is(check([put(1, 'x', 'a', 0, 10, null), get(2, 'x', 1, 2, 'a')]).outcome, 'ok');
});

test('two overlapping writes are accepted in either order, but reads must agree on one', (t) => {
  const writes = [put(1, 'x', 'a', 0, 10, undefined), put(2, 'x', 'b', 0, 10, undefined)];
  t.is(check([...writes, get(3, 'x', 11, 12, 'a')]).outcome, 'ok');
  t.is(check([...writes, get(3, 'x', 11, 12, 'b')]).outcome, 'ok');
  t.is(check([...writes, get(3, 'x', 11, 12, 'a'), get(3, 'x', 13, 14, 'b')]).outcome, 'illegal');
});

test('once a reader saw a write, a later reader cannot miss it', (t) => {
  t.is(
    check([put(1, 'x', 'a', 0, 10, null), get(2, 'x', 1, 2, 'a'), get(3, 'x', 3, 4, null)]).outcome,
    'illegal',
  );
});

test('a history is linearizable only because an unknown-outcome write took effect', (t) => {
  const unknownWrite = put(1, 'x', 'a', 0, undefined, undefined);
  t.is(check([unknownWrite, get(2, 'x', 5, 6, 'a')]).outcome, 'ok');
  // It may take effect long after its client gave up, between two reads.
  t.is(check([unknownWrite, get(2, 'x', 5, 6, null), get(2, 'x', 7, 8, 'a')]).outcome, 'ok');
  // But it takes effect once: it cannot be seen, then unseen.
  t.is(check([unknownWrite, get(2, 'x', 5, 6, 'a'), get(2, 'x', 7, 8, null)]).outcome, 'illegal');
  // And never before its call.
  t.is(
    check([get(2, 'x', 0, 1, 'a'), put(1, 'x', 'a', 2, undefined, undefined)]).outcome,
    'illegal',
  );
});

test('an unknown-outcome write that nobody observed may never have happened', (t) => {
  t.is(
    check([
      put(1, 'x', 'a', 0, undefined, undefined),
      get(2, 'x', 5, 6, null),
      get(2, 'x', 7, 8, null),
    ]).outcome,
    'ok',
  );
});

test('put answers the previous value and compare-and-set its decision; both are checked', (t) => {
  t.is(check([put(1, 'x', 'a', 0, 1, null), put(1, 'x', 'b', 2, 3, null)]).outcome, 'illegal');
  t.is(
    check([put(1, 'x', 'a', 0, 1, null), cas(2, 'x', 'z', 'b', 2, 3, true, 'b')]).outcome,
    'illegal',
  );
  t.is(
    check([put(1, 'x', 'a', 0, 1, null), cas(2, 'x', 'z', 'b', 2, 3, false, 'a')]).outcome,
    'ok',
  );
  t.is(
    check([cas(1, 'x', null, 'a', 0, 5, true, 'a'), cas(2, 'x', null, 'b', 0, 5, true, 'b')])
      .outcome,
    'illegal',
    'two creators cannot both win',
  );
});

test('keys are checked independently', (t) => {
  const result = check([
    put(1, 'x', 'a', 0, 1, null),
    put(1, 'y', 'b', 2, 3, null),
    get(2, 'x', 4, 5, 'a'),
    get(2, 'y', 4, 5, 'b'),
  ]);
  t.is(result.outcome, 'ok');
  t.is(result.partitions, 2);
});

test('a search over budget is undecided, not a pass', (t) => {
  const history = [
    put(1, 'x', 'a', 0, 10, undefined),
    put(2, 'x', 'b', 0, 10, undefined),
    get(3, 'x', 11, 12, 'b'),
  ];
  t.is(
    checkLinearizability(kvRegisterModel, history, { maxStepsPerPartition: 1 }).outcome,
    'unknown',
  );
});

test('a return before its call is refused as a malformed history', (t) => {
  t.throws(() => check([get(1, 'x', 5, 4, null)]), {
    instanceOf: RangeError,
    message: /before its call time/,
  });
});

/**
 * Clients run against a truly atomic register: each operation takes effect at a random instant
 * between its call and its return, so the history is linearizable by construction. Some clients
 * lose the answer (unknown outcome) and their operation may or may not have taken effect.
 */
function atomicRegisterHistory(
  seed: number,
  clients: number,
  opsPerClient: number,
  keys: string[],
): Op[] {
  const rng = new SeededRng(seed);
  type Planned = { op: Op; at: number | undefined; lost: boolean };
  const planned: Planned[] = [];
  for (let c = 0; c < clients; c++) {
    let time = rng.int(20);
    for (let i = 0; i < opsPerClient; i++) {
      const key = rng.pick(keys);
      const roll = rng.int(3);
      const input: KvCommand =
        roll === 0
          ? { op: 'get', key }
          : roll === 1
            ? { op: 'put', key, value: `${c}.${i}` }
            : {
                op: 'cas',
                key,
                expected: rng.chance(0.5) ? null : `${rng.int(clients)}.${rng.int(i + 1)}`,
                value: `${c}.${i}`,
              };
      const call = time;
      const at = call + 1 + rng.int(30);
      const ret = at + 1 + rng.int(30);
      const lost = rng.chance(0.03);
      planned.push({
        op: { client: c, input, call, return: lost ? undefined : ret },
        at: lost && rng.chance(0.5) ? undefined : at,
        lost,
      });
      time = ret + 1 + rng.int(10);
    }
  }
  const data = new Map<string, string>();
  const effective = planned.filter((p) => p.at !== undefined).sort((a, b) => a.at! - b.at!);
  for (const p of effective) {
    const i = p.op.input;
    const current = data.get(i.key) ?? null;
    let output: KvResult;
    if (i.op === 'put') {
      data.set(i.key, i.value);
      output = { op: 'put', previous: current };
    } else if (i.op === 'get') output = { op: 'get', value: current };
    else if (current === i.expected) {
      data.set(i.key, i.value);
      output = { op: 'cas', ok: true, value: i.value };
    } else output = { op: 'cas', ok: false, value: current };
    if (!p.lost) p.op.output = output;
  }
  return planned.map((p) => p.op);
}

test('long concurrent histories of an atomic register are accepted, quickly', (t) => {
  for (let seed = 1; seed <= 10; seed++) {
    const history = atomicRegisterHistory(seed, 12, 80, ['a', 'b', 'c']);
    const result = check(history);
    t.is(result.outcome, 'ok', `seed ${seed}: ${describeIllegal(kvRegisterModel, result)}`);
  }
});

test('the same histories with one read falsified to a value never written are rejected', (t) => {
  for (let seed = 1; seed <= 10; seed++) {
    const history = atomicRegisterHistory(seed, 12, 80, ['a', 'b', 'c']);
    const reads = history.filter((op) => op.input.op === 'get' && op.output !== undefined);
    const read = reads[new SeededRng(seed).int(reads.length)];
    read.output = { op: 'get', value: 'never-written' };
    t.is(check(history).outcome, 'illegal', `seed ${seed}`);
  }
});

test('the recorder orders events as they happen and settles each operation once', (t) => {
  const recorder = new HistoryRecorder<KvCommand, KvResult>();
  const w = recorder.invoke('w', { op: 'put', key: 'x', value: 'a' });
  const lost = recorder.invoke('l', { op: 'put', key: 'x', value: 'b' });
  const refused = recorder.invoke('r', { op: 'put', key: 'x', value: 'c' });
  w.ok({ op: 'put', previous: null });
  lost.unknown();
  refused.failed();
  const r = recorder.invoke('r', { op: 'get', key: 'x' });
  t.is(recorder.pending, 1);
  r.ok({ op: 'get', value: 'b' });
  t.throws(() => r.ok({ op: 'get', value: 'b' }), { message: /settled twice/ });
  const history = recorder.history();
  t.deepEqual(
    history.map((op) => [op.client, op.call, op.return]),
    [
      ['w', 0, 3],
      ['l', 1, undefined],
      ['r', 4, 5],
    ],
  );
  t.is(check(history).outcome, 'ok');
});

test('unknown-outcome writes that are never observed stay cheap to search', (t) => {
  const lost = Array.from({ length: 12 }, (_, i) =>
    put(100 + i, 'x', `v${i}`, i, undefined, undefined),
  );
  const after = [
    put(1, 'x', 'z', 100, 101, 'v7'),
    ...Array.from({ length: 30 }, (_, i) => get(2, 'x', 102 + 2 * i, 103 + 2 * i, 'z')),
  ];
  const result = check([...lost, ...after]);
  t.is(result.outcome, 'ok');
  t.true(result.steps < 20_000, `took ${result.steps} steps`);
  // A lost write may still land after everything else was answered.
  t.is(check([...lost, ...after, get(3, 'x', 200, 201, 'v3')]).outcome, 'ok');
  const rejected = check([...lost, ...after, get(3, 'x', 200, 201, 'never-written')]);
  t.is(rejected.outcome, 'illegal');
  t.log(`steps: ok ${result.steps}, illegal ${rejected.steps}`);
});

test('the report of an illegal history shows the longest legal prefix found', (t) => {
  const result = check([
    put(1, 'x', 'a', 0, 1, null),
    put(1, 'x', 'b', 2, 3, 'a'),
    get(2, 'x', 4, 5, 'a'),
  ]);
  t.deepEqual(
    result.illegal!.longestLinearization.map((op) => op.input),
    [
      { op: 'put', key: 'x', value: 'a' },
      { op: 'put', key: 'x', value: 'b' },
    ],
  );
});
