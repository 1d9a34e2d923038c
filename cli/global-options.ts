import { Option, type Command } from 'commander';
import { loadAccess } from './connection.js';
import type { CliContext } from './context.js';
import { OUTPUT_FORMATS } from './output.js';

/**
 * The options every command takes besides --json, --url and --token: the output format, the
 * context and where the token and CA come from. The context is read once, before the action.
 */
export function addGlobalOptions(program: Command, ctx: CliContext): void {
  program
    .addOption(
      new Option(
        '-o, --output <format>',
        'table (default), wide (every column), json (as --json), yaml, or name (the names or ids only, one per line)',
      ).choices(OUTPUT_FORMATS),
    )
    .option('--no-headers', 'tables without their header line (and listings without their summary line)')
    .option('--context <name>', 'the context to use instead of the current one (see "baton context")')
    .option('--token-file <path>', 'read the bearer token from the first line of this file (keeps it out of ps and shell history)')
    .option('--cacert <path>', 'trust this CA (PEM) for https addresses, besides the system CAs and NODE_EXTRA_CA_CERTS')
    .hook('preAction', (_program, action) => loadAccess(ctx, action));
}
