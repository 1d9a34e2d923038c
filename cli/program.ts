import { Command } from 'commander';
import { registerAudit } from './audit/audit-commands.js';
import { registerAuthority } from './commands/authority.js';
import { registerMember } from './commands/member.js';
import { registerNew } from './commands/new.js';
import { registerRepair } from './commands/repair.js';
import { registerStatus } from './commands/status.js';
import { registerNode } from './commands/node.js';
import { registerStreams } from './commands/streams.js';
import { registerPlan } from './streams/plan-commands.js';
import { registerUp } from './commands/up.js';
import type { CliContext } from './context.js';
import { EXIT_CODES_HELP } from './exit-codes.js';
import { addGlobalOptions } from './global-options.js';
import { registerCompletion } from './commands/completion.js';
import { registerContext } from './commands/context.js';
import { registerVersion } from './commands/version.js';

/**
 * The `baton` command and its groups, one file each under commands/. Commander never exits
 * the process itself (exitOverride) and never prints errors itself: main turns every outcome
 * into one message and one documented exit code.
 */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('baton')
    .description(
      'Move ownership safely between the members of a distributed system: run a local cluster, administer it, scaffold hosts and plugins.',
    )
    .version(ctx.pkg.version, '-V, --version', 'print the version of Baton')
    .option(
      '--json',
      'machine-readable output: one JSON document on stdout, errors as JSON on stderr',
    )
    .option(
      '--url <url>',
      'address of the node a command talks to (default: $BATON_URL, else the variant\'s default address)',
    )
    .option('--token <token>', 'bearer token for the admin API (default: $BATON_TOKEN)')
    .helpOption('-h, --help', 'show help for a command')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => ctx.stdout.write(text),
      writeErr: (text) => ctx.stderr.write(text),
      // Errors are reported once, by main, in the same shape as every other failure.
      outputError: () => undefined,
    })
    .addHelpText(
      'after',
      `
Run "baton <command> --help" for the options of a command.

${EXIT_CODES_HELP}`,
    );
  addGlobalOptions(program, ctx);
  program.configureHelp({ sortSubcommands: false, showGlobalOptions: true });
  registerUp(program, ctx);
  registerStatus(program, ctx);
  registerNode(program, ctx);
  registerStreams(program, ctx);
  registerPlan(program, ctx);
  registerAuthority(program, ctx);
  registerAudit(program, ctx);
  registerMember(program, ctx);
  registerNew(program, ctx);
  registerRepair(program, ctx);
  registerContext(program, ctx);
  registerVersion(program, ctx);
  registerCompletion(program, ctx);
  return program;
}
