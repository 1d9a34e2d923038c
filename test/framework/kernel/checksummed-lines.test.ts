import test from 'ava';
import fc from 'fast-check';
import { encodeChecksummedLine, scanChecksummedLines } from '@baton/kernel/internal/checksummed-lines.js';

const encoder = new TextEncoder();
const anyRecord = (v: unknown): v is { n: number; text: string } => typeof v === 'object' && v !== null && typeof (v as { n?: unknown }).n === 'number';
const fileOf = (records: unknown[]) => encoder.encode(records.map(encodeChecksummedLine).join(''));
/** Byte offset of each line's start, and the file's length last. */
const lineStarts = (records: unknown[]) => {
  const starts = [0];
  for (const r of records) starts.push(starts[starts.length - 1] + encoder.encode(encodeChecksummedLine(r)).length);
  return starts;
};
const records = (n: number) => Array.from({ length: n }, (_, i) => ({ n: i, text: `record ${i} ✓` }));

test('an intact file reads whole, with each record\'s offset', (t) => {
  const scan = scanChecksummedLines(fileOf(records(3)), anyRecord);
  t.deepEqual(scan.records.map((r) => r.value.n), [0, 1, 2]);
  t.deepEqual(scan.records.map((r) => r.offset), lineStarts(records(3)).slice(0, 3));
  t.is(scan.tornBytes, 0);
  t.is(scan.damage, undefined);
});

test('an incomplete last line is a torn tail, not damage', (t) => {
  const bytes = fileOf(records(3));
  const starts = lineStarts(records(3));
  const scan = scanChecksummedLines(bytes.subarray(0, bytes.length - 5), anyRecord);
  t.deepEqual(scan.records.map((r) => r.value.n), [0, 1]);
  t.is(scan.intactBytes, starts[2]);
  t.is(scan.tornBytes, bytes.length - 5 - starts[2]);
  t.is(scan.damage, undefined);
  // A whole record whose newline never reached the disk was never acknowledged either.
  t.is(scanChecksummedLines(bytes.subarray(0, bytes.length - 1), anyRecord).tornBytes, bytes.length - 1 - starts[2]);
  // Zeros a filesystem leaves past the end after a power cut are a torn tail too.
  const zeros = new Uint8Array(bytes.length + 64);
  zeros.set(bytes);
  t.like(scanChecksummedLines(zeros, anyRecord), { intactBytes: bytes.length, tornBytes: 64, damage: undefined });
});

test('a flipped byte in the middle is damage at that line, with the intact records after it', (t) => {
  const bytes = fileOf(records(5));
  const starts = lineStarts(records(5));
  bytes[starts[2] + 20] ^= 0x01;
  const scan = scanChecksummedLines(bytes, anyRecord);
  t.deepEqual(scan.records.map((r) => r.value.n), [0, 1]);
  t.is(scan.intactBytes, starts[2]);
  t.like(scan.damage, { offset: starts[2], reason: 'its checksum does not match', damagedBytes: starts[3] - starts[2] });
  t.deepEqual(scan.damage!.later.map((r) => [r.value.n, r.offset]), [[3, starts[3]], [4, starts[4]]]);
});

test('a damaged last line is damage too when it is whole (only an incomplete line is torn)', (t) => {
  const bytes = fileOf(records(3));
  const starts = lineStarts(records(3));
  bytes[bytes.length - 4] ^= 0x20;
  t.like(scanChecksummedLines(bytes, anyRecord).damage, { offset: starts[2], later: [] });
  // Its newline damaged into another byte: a whole record plus one stray byte.
  const newline = fileOf(records(3));
  newline[newline.length - 1] = 0x4a;
  t.like(scanChecksummedLines(newline, anyRecord), { tornBytes: 0, damage: { offset: starts[2], reason: 'its newline is damaged' } });
});

test('a record with a good checksum but the wrong shape is damage', (t) => {
  const bytes = encoder.encode(encodeChecksummedLine({ n: 0 }) + encodeChecksummedLine({ other: true }) + encodeChecksummedLine({ n: 2 }));
  const scan = scanChecksummedLines(bytes, anyRecord, 'a numbered record');
  t.like(scan.damage, { reason: 'its checksum matches but it is not a numbered record' });
  t.deepEqual(scan.damage!.later.map((r) => r.value.n), [2]);
});

test('property: any cut of a file is at most a torn tail, and keeps every whole line before it', (t) => {
  t.notThrows(() => fc.assert(
    fc.property(fc.array(fc.record({ n: fc.integer(), text: fc.string({ unit: 'grapheme' }) }), { minLength: 1, maxLength: 8 }), fc.nat(), (rs, at) => {
      const bytes = fileOf(rs);
      const cut = at % (bytes.length + 1);
      const scan = scanChecksummedLines(bytes.subarray(0, cut), anyRecord);
      const whole = lineStarts(rs).filter((s) => s > 0 && s <= cut).length;
      return scan.damage === undefined && scan.records.length === whole && scan.intactBytes + scan.tornBytes === cut;
    }),
  ));
});

test('property: any one damaged byte in a whole line is reported at that line, and the lines after it are counted', (t) => {
  t.notThrows(() => fc.assert(
    fc.property(
      fc.array(fc.record({ n: fc.integer(), text: fc.string({ unit: 'grapheme' }) }), { minLength: 2, maxLength: 8 }),
      fc.nat(),
      fc.integer({ min: 1, max: 255 }),
      (rs, at, flip) => {
        const bytes = fileOf(rs);
        // Any byte but the file's last (a damaged last newline with nothing after is tested above).
        const position = at % (bytes.length - 1);
        bytes[position] ^= flip;
        const starts = lineStarts(rs);
        const line = starts.findIndex((s, i) => s <= position && position < starts[i + 1]);
        const scan = scanChecksummedLines(bytes, anyRecord);
        if (!scan.damage) return false;
        // A newline damaged into another byte joins two lines: the damage starts at the first.
        const laterWhole = rs.length - line - (bytes[starts[line + 1] - 1] === 0x0a ? 1 : 2);
        return scan.damage.offset === starts[line] && scan.records.length === line && scan.damage.later.length === laterWhole;
      },
    ),
  ));
});
