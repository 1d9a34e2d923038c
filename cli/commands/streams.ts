import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { registerDrainCommands } from '../streams/drain-commands.js';
import { registerListCommand } from '../streams/list-command.js';
import { registerFailoverCommand } from '../streams/failover-command.js';
import { registerNodeCommands } from '../streams/node-commands.js';
import { registerRebalanceCommand } from '../streams/rebalance-command.js';
import { registerStreamCommands } from '../streams/stream-commands.js';
import { registerTransferCommands } from '../streams/transfer-commands.js';

/** `baton streams ...`: the admin and data commands of the stream-transfer variant. */
export function registerStreams(program: Command, ctx: CliContext): void {
  const streams = program
    .command('streams')
    .description(
      'stream-transfer variant: create, append, read, transfer, drain, rebalance and fail over streams',
    )
    .addHelpText(
      'after',
      `
Every command talks to one node's API: --url (or BATON_URL, else the context's, default
http://127.0.0.1:7700) and --token or --token-file (or BATON_TOKEN, else the context's) for the
admin calls. Any node answers; appends are sent on to the
stream's owner.

Examples:
  baton streams create events          # with the context "baton up" made current
  baton streams create events --url http://127.0.0.1:7700 --token-file ~/.config/baton/tokens/stream.token
  baton streams append events hello world
  baton streams transfer events --to n2
  baton streams drain n1 --yes
  baton streams failover n3 --yes`,
    );
  registerStreamCommands(streams, ctx);
  registerListCommand(streams, ctx);
  registerTransferCommands(streams, ctx);
  registerDrainCommands(streams, ctx);
  registerFailoverCommand(streams, ctx);
  registerRebalanceCommand(streams, ctx);
  registerNodeCommands(streams, ctx);
}
