/**
 * The exit codes of `baton`, stable so scripts can branch on them. They are listed in
 * `baton --help` as well; change both together.
 */
export const ExitCode = {
  /** The command did what was asked. */
  Ok: 0,
  /** The command ran but was refused or failed (a refused transfer, a file that exists...). */
  Failed: 1,
  /** The command line itself is wrong: unknown command or option, missing or invalid argument. */
  Usage: 2,
  /** A server the command needed could not be reached or gave no answer in time (the message names the address). */
  Unreachable: 3,
  /** `baton status`: the cluster answered, and a member is down or not ready, or there is no leader. */
  Unhealthy: 4,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODES_HELP = `Exit codes:
  0  ok
  1  refused or failed (the message says why)
  2  usage error (unknown command or option, invalid argument)
  3  unreachable (a server could not be reached or gave no answer in time; the message names its address)
  4  unhealthy (baton status: a member is down or not ready, or there is no leader)`;
