import test from 'ava';
import type { Clock } from '@baton/contracts/internal/clock.js';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { openS3Fixture } from './s3-fixture.js';

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) =>
  b === undefined ? undefined : new TextDecoder().decode(b);

/** A virtual clock that remembers every back-off the store asked for. */
function recordingClock(): { clock: Clock; virtual: VirtualClock; sleeps: number[] } {
  const virtual = new VirtualClock();
  const sleeps: number[] = [];
  const clock: Clock = {
    now: () => virtual.now(),
    setTimer: (ms, fn) => virtual.setTimer(ms, fn),
    sleep: (ms, signal) => {
      sleeps.push(ms);
      return virtual.sleep(ms, signal);
    },
  };
  return { clock, virtual, sleeps };
}

/**
 * Settles a store operation whose back-offs run on a virtual clock: lets real I/O progress, and
 * whenever the store sleeps, moves virtual time to the wake-up at once.
 */
async function settle<T>(
  operation: Promise<T>,
  virtual: VirtualClock,
): Promise<PromiseSettledResult<T>> {
  let result: PromiseSettledResult<T> | undefined;
  void Promise.allSettled([operation]).then(([r]) => (result = r));
  const deadline = Date.now() + 20_000;
  while (result === undefined) {
    if (Date.now() > deadline)
      throw new Error('the operation neither succeeded nor failed within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 1));
    const due = virtual.nextDue();
    if (due !== undefined) virtual.advance(due - virtual.now());
  }
  return result;
}

const RETRY = { attempts: 5, baseDelayMs: 100, maxDelayMs: 1_000 };

test('a stopped server: bounded, jittered back-off on the injected clock, then StoreUnavailableError; a restart heals the same store', async (t) => {
  const { clock, virtual, sleeps } = recordingClock();
  const { store, server, cleanup } = await openS3Fixture(
    { retry: RETRY },
    { clock, rng: new SeededRng(42) },
  );
  t.teardown(cleanup);
  await store.put('kept', utf8('before'));
  sleeps.length = 0;

  await server.stop();
  for (const [what, operation] of [
    ['get', () => store.get('kept')],
    ['put', () => store.put('lost', utf8('x'))],
    ['list', () => store.list('')],
  ] as [string, () => Promise<unknown>][]) {
    sleeps.length = 0;
    const result = await settle(operation(), virtual);
    t.is(result.status, 'rejected', what);
    const error = (result as PromiseRejectedResult).reason;
    t.true(error instanceof StoreUnavailableError, `${what}: ${String(error)}`);
    t.regex(error.message, /after 5 tries/, what);
    t.is(sleeps.length, RETRY.attempts - 1, `${what}: one back-off between tries`);
    sleeps.forEach((ms, i) => {
      const ceiling = Math.min(RETRY.maxDelayMs, RETRY.baseDelayMs * 2 ** i);
      t.true(
        ms >= 0 && ms <= ceiling,
        `${what}: back-off ${i + 1} is ${ms} ms, ceiling ${ceiling}`,
      );
    });
  }
  t.true(new Set(sleeps).size > 1, 'jitter: the back-offs are not all equal');

  await server.restart();
  const result = await settle(store.get('kept'), virtual);
  t.deepEqual(result.status, 'fulfilled');
  t.is(
    text((result as PromiseFulfilledResult<Uint8Array | undefined>).value),
    'before',
    'data survived',
  );
  t.is(
    text(
      await settle(store.get('lost'), virtual).then(
        (r) => (r as PromiseFulfilledResult<Uint8Array | undefined>).value,
      ),
    ),
    undefined,
  );
});

test('one seed, one back-off schedule: retries replay exactly', async (t) => {
  const schedules: number[][] = [];
  for (let run = 0; run < 2; run++) {
    const { clock, virtual, sleeps } = recordingClock();
    const { store, server, cleanup } = await openS3Fixture(
      { retry: RETRY, conditionalPut: false },
      { clock, rng: new SeededRng(9) },
    );
    t.teardown(cleanup);
    await server.stop();
    await settle(store.get('x'), virtual);
    schedules.push([...sleeps]);
  }
  t.is(schedules[0].length, RETRY.attempts - 1);
  t.deepEqual(schedules[0], schedules[1]);
});

test('5xx answers are retried and a later success is a success', async (t) => {
  const { store, server, cleanup } = await openS3Fixture();
  t.teardown(cleanup);
  server.failNext(2, { status: 503, method: 'PUT' });
  const before = server.requests.get('PUT') ?? 0;
  await store.put('k', utf8('v'));
  t.is((server.requests.get('PUT') ?? 0) - before, 3, 'two failures, then the try that worked');
  t.is(text(await store.get('k')), 'v');
});

test('persistent 5xx answers end in StoreUnavailableError saying what the server answered', async (t) => {
  const { store, server, cleanup } = await openS3Fixture();
  t.teardown(cleanup);
  server.failNext(3, { status: 500, method: 'GET' });
  const error = await t.throwsAsync(store.get('k'), { instanceOf: StoreUnavailableError });
  t.regex(error!.message, /after 3 tries: the server answered HTTP 500/);
  t.is(await store.get('k'), undefined, 'the server answers again once the faults are spent');
});

test('an upload cut by a server stop leaves the old object or nothing, never a torn one', async (t) => {
  const { store, server, cleanup } = await openS3Fixture({
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  });
  t.teardown(cleanup);
  const big = new Uint8Array(16 * 1024 * 1024).fill(7);
  await store.put('segment', utf8('old'));
  const upload = store.put('segment', big);
  const fresh = store.put('fresh', big);
  await server.stop();
  const outcomes = await Promise.allSettled([upload, fresh]);
  await server.restart();
  for (const [i, key] of ['segment', 'fresh'].entries()) {
    const stored = await store.get(key);
    if (outcomes[i].status === 'rejected') {
      t.true((outcomes[i] as PromiseRejectedResult).reason instanceof StoreUnavailableError);
    }
    const whole =
      stored !== undefined && stored.byteLength === big.byteLength && stored.every((b) => b === 7);
    const previous = key === 'segment' ? text(stored) === 'old' : stored === undefined;
    t.true(whole || previous, `${key}: ${stored?.byteLength} bytes`);
    if (outcomes[i].status === 'fulfilled') t.true(whole, `${key}: an acknowledged put is whole`);
  }
});
