import { isDeepStrictEqual } from 'node:util';
import test from 'ava';
import fc from 'fast-check';
import { canonicalJson, commandFingerprint } from '@baton/consensus/internal/canonical-json.js';

/** A value as it arrives over the wire: what JSON.parse makes of its text. */
const asReceived = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

test('a "__proto__" member is kept: it is a member like any other, not the prototype', (t) => {
  const withProto = JSON.parse('{"x":1,"__proto__":{"a":1}}');
  t.is(canonicalJson(withProto), '{"__proto__":{"a":1},"x":1}');
  t.not(canonicalJson(withProto), canonicalJson({ x: 1 }));
  t.not(
    canonicalJson(JSON.parse('{"__proto__":{"a":1}}')),
    canonicalJson(JSON.parse('{"__proto__":{"a":2}}')),
  );
});

test('key order does not change the fingerprint, at any depth', (t) => {
  t.is(
    canonicalJson({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: null } }),
    canonicalJson({ a: { c: null, d: [1, { e: 3, f: 2 }] }, b: 1 }),
  );
});

test('distinct JSON values give distinct fingerprints, and equal ones the same', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const [x, y] = [asReceived(a), asReceived(b)];
        return (canonicalJson(x) === canonicalJson(y)) === isDeepStrictEqual(x, y);
      }),
      { numRuns: 2_000 },
    ),
  );
  // A value and a copy of it with a member changed (including members named like Object.prototype's).
  t.notThrows(() =>
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom('__proto__', 'constructor', 'toString', 'a', 'b'),
          fc.jsonValue(),
          { minKeys: 1 },
        ),
        fc.jsonValue(),
        (object, other) => {
          const original = asReceived(object) as Record<string, unknown>;
          const key = Object.keys(original)[0];
          const changed = JSON.parse(JSON.stringify(original)) as Record<string, unknown>;
          Object.defineProperty(changed, key, {
            value: other,
            enumerable: true,
            writable: true,
            configurable: true,
          });
          const received = asReceived(changed);
          return (
            (canonicalJson(original) === canonicalJson(received)) ===
            isDeepStrictEqual(original, received)
          );
        },
      ),
      { numRuns: 1_000 },
    ),
  );
});

test("a command's fingerprint leaves out what its proposer observed, and only that", (t) => {
  const asked = { type: 'transfer_authority', authority: 'proj', target: 'west', reason: 'west is up' };
  t.is(commandFingerprint({ ...asked, observed: { at: 1 } }), commandFingerprint({ ...asked, observed: { at: 2, loss: { lost: [] } } }));
  t.is(commandFingerprint({ ...asked, observed: { at: 1 } }), canonicalJson(asked), 'a retry without observations is the same command');
  t.not(commandFingerprint({ ...asked, observed: { at: 1 } }), commandFingerprint({ ...asked, reason: 'other', observed: { at: 1 } }));
  t.not(commandFingerprint({ ...asked, nested: { observed: 1 } }), commandFingerprint({ ...asked, nested: { observed: 2 } }), 'only the top-level member is left out');
  t.is(commandFingerprint([1, 2]), canonicalJson([1, 2]));
});
