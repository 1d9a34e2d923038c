import test from 'ava';
import { pageLines, type PagedListing } from '../../cli/paged-listing.js';

const listing: PagedListing<{ id: string; size: number }> = {
  command: 'baton things list',
  plural: 'things',
  nothing: 'no thing exists yet',
  counted: (total) => `${total} thing${total === 1 ? '' : 's'}`,
  columns: ['THING', 'SIZE'],
  row: (thing) => [thing.id, String(thing.size)],
};

test('a page with more after it is a table, then how many of how many and the command for the next page', (t) => {
  const lines = pageLines(listing, { items: [{ id: 'a', size: 1 }, { id: 'bb', size: 22 }], next: 'bb', total: 5 }, undefined);
  t.deepEqual(lines, ['THING  SIZE', 'a      1', 'bb     22', '2 shown of 5 things; next page: baton things list --after bb']);
});

test('the last page names no next page and counts the total in its own words', (t) => {
  t.deepEqual(pageLines(listing, { items: [{ id: 'a', size: 1 }], next: null, total: 1 }, undefined), ['THING  SIZE', 'a      1', '1 shown of 1 thing']);
});

test('an empty page says there is nothing, or nothing after the --after given', (t) => {
  t.is(pageLines(listing, { items: [], next: null, total: 0 }, undefined), 'no thing exists yet');
  t.is(pageLines(listing, { items: [], next: null, total: 3 }, 'zz'), 'no things after zz');
});
