import test from 'ava';
import { pageLines, type PagedListing } from '@baton/cli/internal/paged-listing.js';

const listing: PagedListing<{ id: string; size: number }> = {
  command: 'baton things list',
  plural: 'things',
  nothing: 'no thing exists yet',
  counted: (total) => `${total} thing${total === 1 ? '' : 's'}`,
  columns: ['THING', 'SIZE'],
  row: (thing) => [thing.id, String(thing.size)],
};

test('a page with more after it is a table, then how many of how many and the command for the next page', (t) => {
  const lines = pageLines(listing, { items: [{ id: 'a', size: 1 }, { id: 'bb', size: 22 }], next: 'bb', total: 5 }, { limit: 100 });
  t.deepEqual(lines, ['THING  SIZE', 'a      1', 'bb     22', '2 shown of 5 things; next page: baton things list --after bb']);
});

test('the next page keeps a --limit given, and quotes an id a shell would split or expand', (t) => {
  const next = (id: string, limit = 100) => (pageLines(listing, { items: [{ id, size: 1 }], next: id, total: 5 }, { limit }) as string[]).at(-1);
  t.is(next('bb', 2), '1 shown of 5 things; next page: baton things list --limit 2 --after bb');
  t.is(next('@scope/pkg'), '1 shown of 5 things; next page: baton things list --after @scope/pkg');
  t.is(next(' pad'), "1 shown of 5 things; next page: baton things list --after ' pad'");
  t.is(next('a b'), "1 shown of 5 things; next page: baton things list --after 'a b'");
  t.is(next("it's $HOME"), "1 shown of 5 things; next page: baton things list --after 'it'\\''s $HOME'");
});

test('the last page names no next page and counts the total in its own words', (t) => {
  t.deepEqual(pageLines(listing, { items: [{ id: 'a', size: 1 }], next: null, total: 1 }, { limit: 100 }), ['THING  SIZE', 'a      1', '1 shown of 1 thing']);
});

test('an empty page says there is nothing, or nothing after the --after given', (t) => {
  t.is(pageLines(listing, { items: [], next: null, total: 0 }, { limit: 100 }), 'no thing exists yet');
  t.is(pageLines(listing, { items: [], next: null, total: 3 }, { after: 'zz', limit: 100 }), 'no things after zz');
});
