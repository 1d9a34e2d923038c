import test from 'ava';
import fc from 'fast-check';
import { readPieces, recordPieces, type HeadPiece } from '@baton/consensus/internal/record-pieces.js';

test('recordPieces cuts a run into pieces of the given weight, in order, never splitting or dropping a record', (t) => {
  fc.assert(
    fc.property(fc.array(fc.nat({ max: 5 }), { maxLength: 300 }), fc.integer({ min: 1, max: 20 }), (weights, perPiece) => {
      const records = weights.map((weight, i) => ({ i, weight }));
      const pieces = [...recordPieces('things', records, perPiece, (r) => 1 + r.weight)];
      const flat = pieces.flatMap((p) => p.records);
      const weightOf = (p: { records: { weight: number }[] }) => p.records.reduce((sum, r) => sum + 1 + r.weight, 0);
      return (
        pieces.every((p) => p.kind === 'things' && p.records.length > 0) &&
        flat.length === records.length &&
        flat.every((r, i) => r === records[i]) &&
        // Every piece but the last closed as soon as it reached the weight, not before.
        pieces.slice(0, -1).every((p) => weightOf(p) >= perPiece && weightOf({ records: p.records.slice(0, -1) }) < perPiece)
      );
    }),
  );
  t.deepEqual([...recordPieces('n', [1, 2, 3], 2)], [
    { kind: 'n', records: [1, 2] },
    { kind: 'n', records: [3] },
  ]);
  t.deepEqual([...recordPieces('n', [], 2)], []);
});

function reader() {
  const taken: [string, unknown[]][] = [];
  const heads: HeadPiece[] = [];
  const assembly = readPieces<typeof taken, HeadPiece & { extra?: string }>({
    what: 'test snapshot',
    format: 3,
    head: (head) => void heads.push(head),
    records: {
      apples: (records) => void taken.push(['apples', records]),
      pears: (records) => void taken.push(['pears', records]),
    },
    finish: () => taken,
  });
  return { assembly, heads };
}

test('readPieces hands the head and each run of records to the reader, in order', (t) => {
  const { assembly, heads } = reader();
  assembly.add({ kind: 'head', format: 3, extra: 'x' });
  assembly.add({ kind: 'apples', records: [1, 2] });
  assembly.add({ kind: 'pears', records: [] });
  assembly.add({ kind: 'apples', records: [3] });
  t.deepEqual(heads, [{ kind: 'head', format: 3, extra: 'x' }]);
  t.deepEqual(assembly.finish(), [
    ['apples', [1, 2]],
    ['pears', []],
    ['apples', [3]],
  ]);
});

test('readPieces refuses what is not a piece of its format, naming the snapshot and what was wrong', (t) => {
  const refused = (pieces: unknown[], message: RegExp) => {
    const { assembly } = reader();
    t.throws(
      () => {
        for (const piece of pieces) assembly.add(piece);
        assembly.finish();
      },
      { message },
    );
  };
  const head = { kind: 'head', format: 3 };
  refused([null], /^test snapshot is malformed: a piece is not an object with a kind/);
  refused(['apples'], /not an object with a kind/);
  refused([{ records: [] }], /not an object with a kind/);
  refused([{ kind: 'apples', records: [] }], /records arrived before the head piece/);
  refused([{ kind: 'head', format: 2 }], /unknown piece format 2/);
  refused([head, { kind: 'plums', records: [] }], /unknown piece kind plums/);
  // Names of Object.prototype members are no kinds the reader has.
  refused([head, { kind: 'constructor', records: [] }], /unknown piece kind constructor/);
  refused([head, { kind: '__proto__', records: [] }], /unknown piece kind __proto__/);
  refused([head, { kind: 'apples', records: { 0: 1 } }], /the apples piece has no records array/);
  refused([], /no head piece/);
});
