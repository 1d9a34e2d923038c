/**
 * How an ObjectStore key becomes an S3 object name, and back.
 *
 * Why not use the key as is: S3 servers disagree about names. MinIO refuses empty segments
 * (`a//b`) and `.`/`..` segments, s3rver silently rewrites them (its files are paths), and every
 * S3 lists in UTF-8 byte order while the contract lists in UTF-16 code unit order (they differ
 * for keys mixing U+E000..U+FFFF with characters beyond U+FFFF). So names are escaped:
 *
 * - Letters, digits, `-`, `.` and `/` stay as they are, so ordinary keys such as
 *   `segments/orders-1/000042.seg` read the same in the bucket.
 * - Every other UTF-16 code unit becomes a lead character and its four lowercase hex digits
 *   (`ü` -> `~00fc`, `_` -> `^005f`). The lead depends on where the unit falls between the kept
 *   characters (`!` below `-`, `@` between `9` and `A`, `^` between `Z` and `a`, `~` above
 *   `z`), so escaped names sort exactly where the keys do. The leads are characters that S3
 *   servers pass through listings untouched (s3rver XML-escapes a backtick and clients turn `+`
 *   into a space, so neither appears in a name).
 * - At the start of the key and after a `/`, `-`, `.` and `/` are escaped too: no segment is
 *   empty or starts with a dot.
 * - A name that would end in `/` gets a final `!`, because S3 servers treat such names as
 *   folders.
 *
 * Each unit's encoding depends only on the units before it, so the encoding of a prefix is a
 * prefix of the encoding of every key that starts with it (listing by prefix works), and the
 * code is prefix-free and increasing, so S3's byte order on names is the contract's order on
 * keys (listing, startAfter and pagination need no re-sorting). Names are pure ASCII.
 */

/** S3 allows names up to 1024 bytes; escaping makes some keys longer than they look. */
export const MAX_ENCODED_KEY_BYTES = 1024;

interface EscapeRange {
  lead: string;
  from: number;
  to: number;
}

/** In ascending order of units and of leads: that is what makes the encoding order-preserving. */
const ESCAPE_RANGES: EscapeRange[] = [
  { lead: '!', from: 0x00, to: 0x2c },
  { lead: '@', from: 0x3a, to: 0x40 },
  { lead: '^', from: 0x5b, to: 0x60 },
  { lead: '~', from: 0x7b, to: 0xffff },
];
const LEADS = new Set(ESCAPE_RANGES.map((range) => range.lead));
const TERMINATOR = '!';

function isKept(unit: number, atSegmentStart: boolean): boolean {
  if (unit === 0x2d || unit === 0x2e || unit === 0x2f) return !atSegmentStart; // - . /
  return (
    (unit >= 0x30 && unit <= 0x39) || // 0-9
    (unit >= 0x41 && unit <= 0x5a) || // A-Z
    (unit >= 0x61 && unit <= 0x7a) // a-z
  );
}

function escape(unit: number): string {
  // `-`, `.` and `/` at a segment start fall in the first range's lead too (0x2d..0x2f): they
  // sort below every digit and letter, as they should.
  const range =
    unit <= 0x2f ? ESCAPE_RANGES[0] : ESCAPE_RANGES.find((r) => unit >= r.from && unit <= r.to)!;
  return range.lead + unit.toString(16).padStart(4, '0');
}

/**
 * The name of a key (`complete`) or the name prefix of a key prefix (`complete: false`).
 *
 * @internal
 */
export function encodeKey(key: string, complete = true): string {
  let out = '';
  let atSegmentStart = true;
  for (let i = 0; i < key.length; i++) {
    const unit = key.charCodeAt(i);
    out += isKept(unit, atSegmentStart) ? key[i] : escape(unit);
    atSegmentStart = unit === 0x2f;
  }
  if (complete && out.endsWith('/')) out += TERMINATOR;
  return out;
}

/**
 * The key a name encodes, or undefined when the name is not one this codec produces (an object
 * some other tool put in the bucket): such names are not part of the store.
 *
 * @internal
 */
export function decodeKey(name: string): string | undefined {
  let key = '';
  for (let i = 0; i < name.length;) {
    const ch = name[i];
    if (ch === TERMINATOR && i === name.length - 1 && name[i - 1] === '/') {
      i++;
      continue;
    }
    if (LEADS.has(ch)) {
      const hex = name.slice(i + 1, i + 5);
      if (!/^[0-9a-f]{4}$/.test(hex)) return undefined;
      key += String.fromCharCode(parseInt(hex, 16));
      i += 5;
    } else {
      key += ch;
      i++;
    }
  }
  // Only the canonical spelling counts, so one key never has two names.
  return encodeKey(key) === name ? key : undefined;
}
