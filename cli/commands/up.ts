import { Option, type Command } from 'commander';
import { outputFor, type CliContext } from '../context.js';

/**
 * `baton up`: a local 3-node cluster of one variant. The hosts it starts are still being
 * built, so for now it says what it will do and what is already available, and succeeds.
 */
export function registerUp(program: Command, ctx: CliContext): void {
  program
    .command('up')
    .description(
      'start a local 3-node cluster of a variant on loopback (Ctrl-C stops it, data is kept)',
    )
    .addOption(
      new Option('--variant <variant>', 'which variant to run')
        .choices(['stream', 'authority'])
        .default('stream'),
    )
    .option('--data-dir <dir>', 'where the nodes keep their data', '.baton/data')
    .option('--base-port <port>', 'first of the ports the nodes listen on (default: free ports)')
    .action((options: { variant: string; dataDir: string }, command: Command) => {
      const output = outputFor(ctx, command);
      output.result(
        {
          variant: options.variant,
          started: false,
          reason: 'the local cluster is not available yet: its hosts are being built',
          available: ['baton new host NAME', 'baton new plugin NAME --contract CONTRACT'],
        },
        (data) => [
          `baton up --variant ${data.variant}: ${data.reason}.`,
          'Available now:',
          ...data.available.map((line) => `  ${line}`),
          'Run "baton --help" for every command.',
        ],
      );
    });
}
