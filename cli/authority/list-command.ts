import type { Command } from 'commander';
import { adminRequest } from '../admin-client.js';
import { integerAtLeast } from '../arguments.js';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { table } from '../table.js';
import { AUTHORITY_CONTROL, controlPaths } from './control-api.js';

/** Authorities per page at most, as the control listener bounds it. */
const MAX_PAGE = 1_000;

interface AuthorityPage {
  authorities: { authority: string; home: string; epoch: number }[];
  next: string | null;
  total: number;
}

/** `baton authority list`: one page of authorities by id, and how to ask for the next. */
export function registerAuthorityListCommand(authority: Command, ctx: CliContext): void {
  withConnectionOptions(authority.command('list'), AUTHORITY_CONTROL)
    .description('list authorities by id, a page at a time: home datacenter and epoch')
    .option('--after <authority>', 'start after this authority (the "next" of the previous page)')
    .option('--limit <n>', `authorities per page (at most ${MAX_PAGE})`, integerAtLeast(1), 100)
    .addHelpText(
      'after',
      `
The node answers one page per call from its applied view, so listing stays cheap with millions
of authorities. The last line names the --after of the next page when there is one.

Examples:
  baton authority list
  baton authority list --limit 1000 --after proj-0999
  baton authority list --json | jq -r '.authorities[] | select(.home == "east") | .authority'`,
    )
    .action(async (options: { after?: string; limit: number }, command: Command) => {
      const output = outputFor(ctx, command);
      const connection = connectionOf(ctx, command, AUTHORITY_CONTROL);
      const { body: page } = await adminRequest<AuthorityPage>(connection.url, {
        method: 'GET',
        path: controlPaths.authorities(options.after, options.limit),
        token: connection.token,
      });
      output.result(page, (p) => {
        if (p.authorities.length === 0) return options.after ? `no authorities after ${options.after}` : 'no authority has a home yet';
        const rows = table(
          ['AUTHORITY', 'HOME', 'EPOCH'],
          p.authorities.map((a) => [a.authority, a.home, String(a.epoch)]),
        );
        const footer =
          p.next === null
            ? `${p.authorities.length} shown of ${p.total} authorit${p.total === 1 ? 'y' : 'ies'}`
            : `${p.authorities.length} shown of ${p.total} authorities; next page: baton authority list --after ${p.next}`;
        return [...rows, footer];
      });
    });
}
