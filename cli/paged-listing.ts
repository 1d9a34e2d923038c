import type { Command } from 'commander';
import { integerAtLeast } from './arguments.js';
import { shellWord } from './shell-word.js';
import type { HumanView } from './output.js';
import { table } from './table.js';

/** How many items a listing asks for per page unless --limit says otherwise. */
const DEFAULT_PAGE = 100;

/**
 * What a listing that pages over `?after=&limit=` shows of its items: the command that lists
 * them (to name the next page), the table of one page, and the words for what it counts.
 */
export interface PagedListing<Item> {
  /** `baton streams list`: the command the last line repeats with --after. */
  command: string;
  /** The items, as the listing says them after "no": `streams`, `authorities`. */
  plural: string;
  /** A page with no item and no --after: nothing to list at all. */
  nothing: string;
  /** The total, counted: `3 stream(s)`, `1 authority`. */
  counted(total: number): string;
  columns: readonly string[];
  row(item: Item): readonly string[];
}

/** One page as the API answers it, its items taken out of their field (`streams`, `authorities`). */
export interface ListedPage<Item> {
  items: readonly Item[];
  /** The id to give as --after for the next page; null on the last page. */
  next: string | null;
  total: number;
}

/**
 * Adds --after and --limit to a listing command: `after` names what --after takes (an id of the
 * listed kind), `perPage` the items a page holds, `maxPage` the bound the server applies.
 */
export function withPageOptions(
  command: Command,
  page: { placeholder: string; after: string; perPage: string; maxPage: number },
): Command {
  return command
    .option(`--after <${page.placeholder}>`, `start after this ${page.after} (the "next" of the previous page)`)
    .option('--limit <n>', `${page.perPage} per page (at most ${page.maxPage})`, integerAtLeast(1, page.maxPage), DEFAULT_PAGE);
}

/**
 * One page for a person: a table, then how many are shown of how many and, when there are more,
 * the command for the next page. An empty page says so, and after what.
 */
export function pageLines<Item>(
  listing: PagedListing<Item>,
  page: ListedPage<Item>,
  asked: { after?: string; limit: number },
  view: HumanView = { headers: true, wide: false },
): string | string[] {
  if (page.items.length === 0) return view.headers ? (asked.after ? `no ${listing.plural} after ${asked.after}` : listing.nothing) : [];
  // Without headers a script reads rows only: no header line, no summary line.
  if (!view.headers) return table(listing.columns, page.items.map((item) => listing.row(item)), view);
  const shown = `${page.items.length} shown of ${listing.counted(page.total)}`;
  // The next page's command keeps the page size asked for, and quotes an id a shell would split.
  const limit = asked.limit === DEFAULT_PAGE ? '' : ` --limit ${asked.limit}`;
  return [
    ...table(listing.columns, page.items.map((item) => listing.row(item))),
    page.next === null ? shown : `${shown}; next page: ${listing.command}${limit} --after ${shellWord(page.next)}`,
  ];
}

