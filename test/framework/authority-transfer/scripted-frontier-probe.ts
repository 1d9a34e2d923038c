import type { Clock } from '@baton/contracts/internal/clock.js';
import type { FeedOrigin } from '@baton/authority-transfer/internal/change-feed.js';
import type { FrontierProbe, FrontierReading, ProbeOptions } from '@baton/authority-transfer/internal/frontier-probe.js';

/**
 * A FrontierProbe whose targets a test scripts: a datacenter answers a serial, is unreachable
 * (no frontier at once), or hangs (an unresponsive target: no answer until the probe's own
 * timeout, on the injected clock). Unknown datacenters read as no frontier, as with the roster.
 */
export class ScriptedFrontierProbe implements FrontierProbe {
  private readonly targets = new Map<string, { kind: 'serial'; serial: number } | { kind: 'unreachable' } | { kind: 'hang' }>();
  readonly calls: { target: string; origin: FeedOrigin; timeoutMs: number }[] = [];
  private waiters: { count: number; resolve(): void }[] = [];

  constructor(private readonly clock: Clock) {}

  answer(target: string, serial: number): void {
    this.targets.set(target, { kind: 'serial', serial });
  }

  unreachable(target: string): void {
    this.targets.set(target, { kind: 'unreachable' });
  }

  hang(target: string): void {
    this.targets.set(target, { kind: 'hang' });
  }

  /** Resolves once at least `count` probes have started: wait on this, never on a sleep. */
  whenProbed(count: number): Promise<void> {
    if (this.calls.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  async probe(target: string, origin: FeedOrigin, options: ProbeOptions): Promise<FrontierReading | undefined> {
    this.calls.push({ target, origin, timeoutMs: options.timeoutMs });
    const ready = this.waiters.filter((w) => this.calls.length >= w.count);
    this.waiters = this.waiters.filter((w) => this.calls.length < w.count);
    for (const w of ready) w.resolve();
    options.signal.throwIfAborted();
    const script = this.targets.get(target);
    if (!script || script.kind === 'unreachable') return undefined;
    if (script.kind === 'serial') return { serial: script.serial, replica: 'scripted' };
    await this.clock.sleep(options.timeoutMs, options.signal);
    return undefined;
  }
}
