import type { Command } from 'commander';
import { Output, type OutputFormat, type Sink } from './output.js';
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

/** The Output for a command, honouring the global -o / --json / --no-headers wherever given. */
export function outputFor(ctx: CliContext, command: Command): Output {
  const { json, output, headers } = command.optsWithGlobals<{ json?: boolean; output?: OutputFormat; headers?: boolean }>();
  return new Output(output ?? (json === true ? 'json' : 'table'), ctx.stdout, ctx.stderr, { headers });
}
