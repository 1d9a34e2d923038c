// The baton command as a function, for embedding it: runCli(argv, context) runs one invocation
// and resolves to its exit code (see ExitCode).
export { runCli } from './run.js';
export { ExitCode } from './exit-codes.js';
export type { CliContext } from './context.js';
export type { Sink } from './output.js';
export type { BatonPackage } from './scaffold/baton-package.js';
