import test from 'ava';
import fc from 'fast-check';
import { decodeKey, encodeKey } from '@baton/plugin-minio/internal/object-key-codec.js';

// Keys drawn to hit the interesting places: slashes and dots (segment rules), the characters
// around every escape range, and both halves of the BMP/astral split that UTF-8 orders
// differently from UTF-16.
const interesting = fc.constantFrom(
  '/',
  '.',
  '-',
  '_',
  '!',
  '+',
  '%',
  '`',
  '~',
  '@',
  '^',
  'a',
  'Z',
  '0',
  '9',
  ' ',
  '\t',
  '\n',
  '\0',
  'é',
  '\uE000',
  '\uFFFF',
  '😀',
  '\uD800',
  '\uDFFF',
  '日',
);
const keyArb = fc
  .array(fc.oneof(interesting, fc.string({ unit: 'binary', maxLength: 2 })), { maxLength: 12 })
  .map((parts) => parts.join(''));
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

test('ordinary keys keep their names', (t) => {
  for (const key of ['segments/orders-1/000042.seg', 'a/b/c/d.bin', 'UPPER/Case', 'v1.2.3/x-y']) {
    t.is(encodeKey(key), key);
  }
});

test('escapes: unicode, underscores, segment starts, a trailing slash', (t) => {
  t.is(encodeKey('ü'), '~00fc');
  t.is(encodeKey('a_b'), 'a^005fb');
  t.is(encodeKey('double//slash'), 'double/!002fslash');
  t.is(encodeKey('dots/.hidden/file.'), 'dots/!002ehidden/file.');
  t.is(encodeKey('/lead'), '!002flead');
  t.is(encodeKey('trailing/'), 'trailing/!');
  t.is(encodeKey('trailing/', false), 'trailing/', 'a prefix is not terminated');
});

test('decode inverts encode for every key', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(keyArb, (key) => {
        fc.pre(key.length > 0);
        return decodeKey(encodeKey(key)) === key;
      }),
      { numRuns: 2_000 },
    ),
  );
  t.is(
    decodeKey('hand made name with spaces'),
    undefined,
    'a name the codec never produces is not a key',
  );
  t.is(decodeKey('a/!002'), undefined, 'a cut escape is not a key');
  t.is(decodeKey('!0061'), undefined, 'a needless escape is not canonical');
});

test('names sort as their keys do (UTF-16 code units), so S3 order is contract order', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(keyArb, keyArb, (a, b) => {
        const ea = encodeKey(a);
        const eb = encodeKey(b);
        return Math.sign(byCodeUnits(ea, eb)) === Math.sign(byCodeUnits(a, b));
      }),
      { numRuns: 5_000 },
    ),
  );
  t.true(encodeKey('z😀') < encodeKey('z\uFFFF'), 'the astral character first, as in UTF-16');
});

test('the name of a prefix is a prefix of the names of its keys', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(keyArb, keyArb, (prefix, rest) => {
        fc.pre(prefix.length + rest.length > 0);
        return encodeKey(prefix + rest).startsWith(encodeKey(prefix, false));
      }),
      { numRuns: 5_000 },
    ),
  );
});

test('names are safe on every S3 server: ASCII, no empty or dot segments, no trailing slash', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(keyArb, (key) => {
        fc.pre(key.length > 0);
        const name = encodeKey(key);
        const segments = name.split('/');
        return (
          /^[!@^~\-./0-9A-Za-z]+$/.test(name) &&
          segments.every((segment) => segment.length > 0 && !segment.startsWith('.')) &&
          !name.endsWith('/')
        );
      }),
      { numRuns: 5_000 },
    ),
  );
});
