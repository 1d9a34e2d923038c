import type { Command } from 'commander';
import { registerAuthorityListCommand } from '../authority/list-command.js';
import { registerAuthorityReadCommands } from '../authority/read-commands.js';
import { registerAuthorityTransferCommands } from '../authority/transfer-commands.js';
import { registerAuthorityWriteCommands } from '../authority/write-commands.js';
import type { CliContext } from '../context.js';

/** `baton authority ...`: planned transfers of the authority-transfer variant. */
export function registerAuthority(program: Command, ctx: CliContext): void {
  const authority = program
    .command('authority')
    .description(
      "authority-transfer variant: create and write to authorities, move one's home between datacenters, cancel, audit",
    )
    .addHelpText(
      'after',
      `
Every command talks to an authority node's control listener (mode ha): --url (or BATON_URL,
default http://127.0.0.1:7601) and --token (or BATON_TOKEN) with the admin:write scope to
create, transfer or cancel, admin:read to read; "write" also needs authority:write.

Examples:
  export BATON_URL=http://127.0.0.1:7601 BATON_TOKEN=$ADMIN_TOKEN
  baton authority members
  baton authority list
  baton authority create docs --home west
  baton authority write proj "publish 1.0.0"
  baton authority transfer proj --from east --to west --reason "drain east"
  baton authority status proj
  baton authority cancel proj
  baton authority audit proj`,
    );
  registerAuthorityWriteCommands(authority, ctx);
  registerAuthorityTransferCommands(authority, ctx);
  registerAuthorityReadCommands(authority, ctx);
  registerAuthorityListCommand(authority, ctx);
}
