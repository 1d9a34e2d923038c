import type { Command } from 'commander';
import { authorityControlApi, cliCall } from '../api-client.js';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { pageLines, withPageOptions, type PagedListing } from '../paged-listing.js';
import { AUTHORITY_CONTROL } from './control-api.js';

/** Authorities per page at most, as the control listener bounds it. */
const MAX_PAGE = 1_000;

interface ListedAuthority {
  authority: string;
  home: string;
  epoch: number;
}

interface AuthorityPage {
  authorities: ListedAuthority[];
  next: string | null;
  total: number;
}

const authorityListing: PagedListing<ListedAuthority> = {
  command: 'baton authority list',
  plural: 'authorities',
  nothing: 'no authority has a home yet',
  counted: (total) => `${total} authorit${total === 1 ? 'y' : 'ies'}`,
  columns: ['AUTHORITY', 'HOME', 'EPOCH'],
  row: (a) => [a.authority, a.home, String(a.epoch)],
};

/** `baton authority list`: one page of authorities by id, and how to ask for the next. */
export function registerAuthorityListCommand(authority: Command, ctx: CliContext): void {
  const command = withConnectionOptions(authority.command('list'), AUTHORITY_CONTROL).description(
    'list authorities by id, a page at a time: home datacenter and epoch',
  );
  withPageOptions(command, { placeholder: 'authority', after: 'authority', perPage: 'authorities', maxPage: MAX_PAGE })
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
      const query = { limit: options.limit, ...(options.after === undefined ? {} : { after: options.after }) };
      const page: AuthorityPage = await cliCall(authorityControlApi(connection).GET('/availability/v1/authorities', { params: { query } }));
      output.result(page, (p, view) => pageLines(authorityListing, { items: p.authorities, next: p.next, total: p.total }, options, view));
    });
}
