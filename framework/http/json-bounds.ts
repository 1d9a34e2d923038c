/** Limits a JSON text must keep before it is parsed: nothing past them is ever materialised. */
export interface JsonBounds {
  /** Deepest nesting of arrays and objects. */
  maxDepth: number;
  /** Longest string (key or value), in UTF-16 code units as JSON.parse would build it, escapes counted raw. */
  maxStringLength: number;
  /** Most members of one array or object. */
  maxContainerLength: number;
}

/**
 * Far above what any request or Raft message of ours holds (nesting below 20, members bounded by
 * the body size), far below what recursive code (JSON.stringify, canonical JSON, zod) survives.
 */
export const DEFAULT_JSON_BOUNDS: JsonBounds = {
  maxDepth: 64,
  maxStringLength: 16 * 1024 * 1024,
  maxContainerLength: 10_000_000,
};

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;

/**
 * Why `text` breaks `bounds`, or undefined when it keeps them. One pass over the characters,
 * no allocation beyond a counter per nesting level: it runs before JSON.parse on every peer
 * message and request body. It does not validate the syntax (JSON.parse does that next); it
 * only guarantees that whatever parses from the text is no deeper, longer or wider than allowed.
 */
export function jsonBoundsViolation(text: string, bounds: JsonBounds = DEFAULT_JSON_BOUNDS): string | undefined {
  const members = new Uint32Array(bounds.maxDepth + 2);
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i + 1;
      i = closingQuote(text, start);
      if (i - start > bounds.maxStringLength) return `a string is longer than ${bounds.maxStringLength} characters`;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      depth++;
      if (depth > bounds.maxDepth) return `nesting is deeper than ${bounds.maxDepth} levels`;
      members[depth] = 0;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (depth > 0) depth--;
    } else if (c === COMMA && depth > 0) {
      if (++members[depth] >= bounds.maxContainerLength) {
        return `an array or object has more than ${bounds.maxContainerLength} members`;
      }
    }
  }
  return undefined;
}

/**
 * The index of the quote that ends the string starting at `start` (or the text's length when
 * none does). Found with indexOf, which runs at memchr speed: a request body is mostly one long
 * string, and a character loop over a mebibyte took milliseconds of the event loop per body. A
 * quote is escaped when an odd number of backslashes stands right before it.
 */
function closingQuote(text: string, start: number): number {
  let from = start;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return text.length;
    let backslashes = 0;
    for (let b = quote - 1; b >= start && text.charCodeAt(b) === BACKSLASH; b--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/**
 * The nesting depth of an in-memory value, without recursion (so a value deeper than the stack
 * is measured, not fatal); stops counting once past `limit`.
 */
export function valueDepthExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d + 1 > limit) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, d + 1]);
  }
  return false;
}
