import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';

/** The delay figures of one window, in seconds. */
export interface EventLoopDelayReading {
  p50: number;
  p99: number;
  max: number;
}

export interface EventLoopDelayOptions {
  /** Sampling resolution of the monitor, in milliseconds. Default 10. */
  resolutionMs?: number;
  /** Length of a window: percentiles describe the last complete one. Default 10 s. */
  windowMs?: number;
}

const NS_PER_SECOND = 1e9;

/**
 * How late the event loop ran, from perf_hooks' `monitorEventLoopDelay`, in windows: the
 * percentiles describe the last complete window (so two scrapers, a dashboard every second
 * and Prometheus every 15 s, read the same figures instead of resetting each other's), and
 * `max` also covers the window in progress, so a stall shows at the next scrape. A window
 * ends at the first reading after `windowMs`; no timer runs for it.
 */
export class EventLoopDelayMonitor {
  private readonly histogram: IntervalHistogram;
  private readonly windowMs: number;
  private readonly resolutionNs: number;
  private windowStartedAt: number;
  private last: EventLoopDelayReading | undefined;

  constructor(options: EventLoopDelayOptions = {}) {
    this.windowMs = options.windowMs ?? 10_000;
    const resolutionMs = options.resolutionMs ?? 10;
    this.resolutionNs = resolutionMs * 1e6;
    this.histogram = monitorEventLoopDelay({ resolution: resolutionMs });
    this.histogram.enable();
    // The delay is real time by definition: the injected Clock (virtual in simulations) would not measure it.
    this.windowStartedAt = performance.now(); // clock-ok
  }

  read(): EventLoopDelayReading {
    const now = performance.now(); // clock-ok
    const current = this.current();
    if (now - this.windowStartedAt >= this.windowMs) {
      this.last = current;
      this.histogram.reset();
      this.windowStartedAt = now;
      return current;
    }
    const last = this.last ?? current;
    return { p50: last.p50, p99: last.p99, max: Math.max(last.max, current.max) };
  }

  /** Samples taken so far in this window: the first stall a monitor can see is one after its first sample. */
  samples(): number {
    return this.histogram.count;
  }

  stop(): void {
    this.histogram.disable();
  }

  private current(): EventLoopDelayReading {
    const h = this.histogram;
    // An empty histogram reports its sentinel minimum; nothing was late yet.
    if (h.count === 0) return { p50: 0, p99: 0, max: 0 };
    // The monitor records the time between its timer's runs, resolution included: the delay is
    // what exceeds it.
    const late = (ns: number) => Math.max(0, ns - this.resolutionNs) / NS_PER_SECOND;
    return { p50: late(h.percentile(50)), p99: late(h.percentile(99)), max: late(h.max) };
  }
}

let shared: EventLoopDelayMonitor | undefined;

/**
 * The process's one monitor: every host in a process (tests, `baton up` in-process, benchmarks)
 * runs on the same loop, so they share one sampling timer and one window.
 */
export function processEventLoopDelay(): EventLoopDelayMonitor {
  shared ??= new EventLoopDelayMonitor();
  return shared;
}
