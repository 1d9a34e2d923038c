import cliProgress from 'cli-progress';
import type { CliContext } from './context.js';
import type { Output } from './output.js';

/** One reading of a long-running operation: how far it is, in words and as data. */
export interface ProgressReading {
  done: number;
  total: number;
  /** What a person reads: "3 of 10 streams moved (2 moving)". */
  line: string;
  /** The line without its count, for a bar that shows done/total itself: "streams moved (2 moving)". */
  detail?: string;
  /** What a script reads with --json. */
  data: unknown;
}

export interface ProgressView {
  update(reading: ProgressReading): void;
  /** Ends the display (the bar is cleared, so the result that follows stands alone). */
  stop(): void;
}

/**
 * How a command shows a wait: a progress bar on a terminal; one plain line per change when
 * stdout is a file or a pipe (a log keeps every step, no control characters); with --json one
 * `{"progress": ...}` line per change on stderr, so stdout still carries one result document.
 */
export function progressView(ctx: CliContext, output: Output, label: string): ProgressView {
  if (output.machine)
    return new ChangedLines((r) => ctx.stderr.write(`${JSON.stringify({ progress: r.data })}\n`));
  if (ctx.stdout.isTTY) return new TerminalBar(ctx.stdout as NodeJS.WritableStream, label);
  return new ChangedLines((r) => ctx.stdout.write(`${label}: ${r.line}\n`));
}

/** Writes a reading only when its line differs from the last one written: updates, not ticks. */
class ChangedLines implements ProgressView {
  private last?: string;

  constructor(private readonly write: (reading: ProgressReading) => void) {}

  update(reading: ProgressReading): void {
    if (reading.line === this.last) return;
    this.last = reading.line;
    this.write(reading);
  }

  stop(): void {}
}

class TerminalBar implements ProgressView {
  private readonly bar: cliProgress.SingleBar;
  private started = false;

  constructor(stream: NodeJS.WritableStream, label: string) {
    this.bar = new cliProgress.SingleBar({
      stream,
      format: `${label} [{bar}] {value}/{total} {detail}`,
      clearOnComplete: true,
      hideCursor: true,
      barsize: 30,
    });
  }

  update(reading: ProgressReading): void {
    // A total of 0 (nothing to move) still draws a full bar rather than dividing by zero.
    const total = Math.max(reading.total, reading.done, 1);
    const done = reading.total === 0 ? 1 : reading.done;
    if (!this.started) {
      this.bar.start(total, done, { detail: reading.detail ?? reading.line });
      this.started = true;
      return;
    }
    this.bar.setTotal(total);
    this.bar.update(done, { detail: reading.detail ?? reading.line });
  }

  stop(): void {
    if (this.started) this.bar.stop();
  }
}
