/** One crash state the store did not recover from as it must. */
export interface CrashFailure {
  point: number;
  round: number;
  /** The operation the crash came after (the last one issued). */
  after: string;
  message: string;
  lost: string[];
}

export interface CrashReport {
  store: string;
  seed: number;
  /** Operations the workload's run issued through the seam. */
  operations: number;
  /** Distinct on-disk states reopened and checked. */
  explored: number;
  failures: CrashFailure[];
  /** Wall-clock time of the check, for the log line (never asserted). */
  seconds: number;
  /** ...and of its parts: the recorded run, building states, writing them and reopening the store on them. */
  phases: { run: number; model: number; check: number };
}

/**
 * Test knobs from the environment: CRASH_STATES (how many), CRASH_SEED, CRASH_POINT (replay one
 * point); CRASH_DIR (where states are written) is read by the checker.
 */
export function crashCheckSettings(defaults: { states: number; seed: number }): { states: number; seed: number; point?: number } {
  const number = (name: string): number | undefined => {
    const raw = process.env[name];
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0) throw new Error(`${name}=${raw}: give a non-negative integer`);
    return value;
  };
  return { states: number('CRASH_STATES') ?? defaults.states, seed: number('CRASH_SEED') ?? defaults.seed, point: number('CRASH_POINT') };
}

/** The report as one line for the test log, and each failure with the command that replays it. */
export function describeReport(report: CrashReport, replay: string): string[] {
  const lines = [
    `${report.store}: ${report.explored} crash states explored over ${report.operations} recorded operations (seed ${report.seed}) in ${report.seconds.toFixed(1)} s ` +
      `(run ${report.phases.run.toFixed(1)}, model ${report.phases.model.toFixed(1)}, reopen and check ${report.phases.check.toFixed(1)})`,
  ];
  for (const f of report.failures) {
    lines.push(
      `crash at point ${f.point} (after ${f.after}), round ${f.round}: ${f.message}`,
      ...f.lost.slice(0, 12).map((l) => `  ${l}`),
      ...(f.lost.length > 12 ? [`  ... and ${f.lost.length - 12} more`] : []),
      `  replay: CRASH_SEED=${report.seed} CRASH_POINT=${f.point} ${replay}`,
    );
  }
  return lines;
}

