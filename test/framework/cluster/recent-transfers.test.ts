import test from 'ava';
import { MAX_RECENT_TRANSFERS, RECENT_TRANSFERS_WINDOW_MS, RecentTransfers } from '@baton/cluster/internal/recent-transfers.js';
import { BatonMetrics } from '@baton/http/internal/metrics.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';

test('the plot keeps what the metrics recorded, oldest first, for ten minutes and at most 200', (t) => {
  const clock = new VirtualClock();
  const metrics = new BatonMetrics({ defaultMetrics: false, eventLoopDelay: false });
  const recent = new RecentTransfers(metrics, clock);
  metrics.recordTransfer('completed', 40);
  clock.advance(1_000);
  metrics.recordTransfer('abandoned', 7);
  t.deepEqual(recent.list(), [
    { at: clock.now() - 1_000, outcome: 'completed', durationMs: 40 },
    { at: clock.now(), outcome: 'abandoned', durationMs: 7 },
  ]);
  clock.advance(RECENT_TRANSFERS_WINDOW_MS - 500);
  t.deepEqual(recent.list().map((r) => r.outcome), ['abandoned'], 'older than the window: gone');
  for (let i = 0; i < MAX_RECENT_TRANSFERS + 50; i++) metrics.recordTransfer('completed', i);
  const kept = recent.list();
  t.is(kept.length, MAX_RECENT_TRANSFERS);
  t.is(kept.at(-1)!.durationMs, MAX_RECENT_TRANSFERS + 49, 'the newest are kept');
  recent.stop();
  metrics.recordTransfer('completed', 1);
  t.is(recent.list().length, MAX_RECENT_TRANSFERS, 'stopped: no longer listening');
});

test('a transfer recorded with what moved keeps its name, source and target, for the list of recent transfers by name', (t) => {
  const clock = new VirtualClock();
  const metrics = new BatonMetrics({ defaultMetrics: false, eventLoopDelay: false });
  const recent = new RecentTransfers(metrics, clock);
  metrics.recordTransfer('completed', 12, { name: 'orders', source: 'n2', target: 'n3' });
  t.deepEqual(recent.list(), [{ at: clock.now(), outcome: 'completed', durationMs: 12, name: 'orders', source: 'n2', target: 'n3' }]);
});
