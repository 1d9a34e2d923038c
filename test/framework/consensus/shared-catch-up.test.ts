import test from 'ava';
import { SharedCatchUp } from '@baton/consensus/internal/shared-catch-up.js';
import { flushMicrotasks } from '@baton/conformance/internal/virtual-clock.js';

/** A linearizable read the test resolves or rejects by hand, counting how many were issued. */
function scriptedReads() {
  const pending: { resolve(): void; reject(error: Error): void }[] = [];
  const read = () =>
    new Promise<unknown>((resolve, reject) => {
      pending.push({ resolve: () => resolve(undefined), reject });
    });
  return { read, pending };
}

test('callers arriving together share one read', async (t) => {
  const reads = scriptedReads();
  const shared = new SharedCatchUp(reads.read);
  const first = shared.catchUp();
  const second = shared.catchUp();
  t.is(reads.pending.length, 1, 'one read for the first caller');
  reads.pending[0].resolve();
  await first;
  await flushMicrotasks();
  // The second arrived while a read was under way: that read may predate its write, so it waits for the next.
  t.is(reads.pending.length, 2);
  reads.pending[1].resolve();
  await second;
});

test('callers arriving during a read share the next one', async (t) => {
  const reads = scriptedReads();
  const shared = new SharedCatchUp(reads.read);
  const first = shared.catchUp();
  const waiting = [shared.catchUp(), shared.catchUp(), shared.catchUp()];
  reads.pending[0].resolve();
  await first;
  await flushMicrotasks();
  t.is(reads.pending.length, 2, 'the three waiting callers share one read');
  reads.pending[1].resolve();
  await Promise.all(waiting);
  t.is(reads.pending.length, 2);
});

test('a failed read rejects its callers with its error; the next caller reads again', async (t) => {
  const reads = scriptedReads();
  const shared = new SharedCatchUp(reads.read);
  const failing = shared.catchUp();
  reads.pending[0].reject(new Error('no leader confirmed a read index'));
  await t.throwsAsync(failing, { message: /no leader/ });
  const again = shared.catchUp();
  t.is(reads.pending.length, 2, 'a new read, not the failed one');
  reads.pending[1].resolve();
  await t.notThrowsAsync(again);
});
