import type { Command } from 'commander';
import { Output, type Sink } from './output.js';
import type { BatonPackage } from './scaffold/baton-package.js';

/** What commands get from the process: streams, working directory, environment. Tests replace it. */
export interface CliContext {
  stdout: Sink;
  stderr: Sink;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  cwd: string;
  env: NodeJS.ProcessEnv;
  pkg: BatonPackage;
}

/** The Output for a command, honouring the global --json flag wherever it was given. */
export function outputFor(ctx: CliContext, command: Command): Output {
  const { json } = command.optsWithGlobals<{ json?: boolean }>();
  return new Output(json === true, ctx.stdout, ctx.stderr);
}
