import test from 'ava';
import fc from 'fast-check';
import { jsonBoundsViolation, valueDepthExceeds } from '@baton/http/internal/json-bounds.js';

/** Nesting depth of a parsed JSON value, counted the plain recursive way (small values only). */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

function widthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return Math.max(children.length, ...children.map(widthOf));
}

const bounds = { maxDepth: 3, maxStringLength: 1_000_000, maxContainerLength: 4 };

test('the scan refuses exactly the texts whose value is deeper or wider than the bounds, whatever their strings hold', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = JSON.stringify(value);
        const expected =
          depthOf(value) > bounds.maxDepth || widthOf(value) > bounds.maxContainerLength;
        return (jsonBoundsViolation(text, bounds) !== undefined) === expected;
      }),
      { numRuns: 2_000 },
    ),
  );
});

test('a 6,000-deep array and a long string are refused before parsing; the same value in bounds passes', (t) => {
  const deep = `${'['.repeat(6_000)}${']'.repeat(6_000)}`;
  t.regex(jsonBoundsViolation(deep)!, /deeper than 64/);
  t.is(
    jsonBoundsViolation(`{"a":[${'['.repeat(63)}${']'.repeat(63)}]}`),
    'nesting is deeper than 64 levels',
  );
  t.is(jsonBoundsViolation(`{"a":${'['.repeat(63)}${']'.repeat(63)}}`), undefined);
  t.regex(
    jsonBoundsViolation(JSON.stringify({ s: 'x'.repeat(101) }), {
      ...bounds,
      maxStringLength: 100,
    })!,
    /longer than 100/,
  );
  t.is(
    jsonBoundsViolation(JSON.stringify({ s: '[[[[[[\\"]]]' })),
    undefined,
    'brackets and escaped quotes inside strings are text',
  );
});

test('the depth of an in-memory value is measured without recursion, however deep', (t) => {
  let deep: unknown = [];
  for (let i = 0; i < 100_000; i++) deep = [deep];
  t.true(valueDepthExceeds(deep, 64));
  t.false(valueDepthExceeds({ a: [[1]], b: 'x' }, 3));
  t.true(valueDepthExceeds({ a: [[[1]]] }, 3));
});
