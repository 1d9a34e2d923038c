/**
 * A fixed-size set of small integers with an incrementally kept 64-bit hash (two 32-bit
 * Zobrist halves), so the checker can look a set up in its memo without hashing every word.
 */
export class Bitset {
  readonly words: Uint32Array;
  private h1 = 0;
  private h2 = 0;

  constructor(
    size: number,
    private readonly zobrist: Zobrist,
  ) {
    this.words = new Uint32Array(Math.ceil(size / 32) || 1);
  }

  set(bit: number): void {
    const mask = 1 << (bit & 31);
    if (this.words[bit >>> 5] & mask) return;
    this.words[bit >>> 5] |= mask;
    this.toggleHash(bit);
  }

  clear(bit: number): void {
    const mask = 1 << (bit & 31);
    if (!(this.words[bit >>> 5] & mask)) return;
    this.words[bit >>> 5] &= ~mask;
    this.toggleHash(bit);
  }

  has(bit: number): boolean {
    return hasBit(this.words, bit);
  }

  hash(): string {
    return `${this.h1.toString(36)}.${this.h2.toString(36)}`;
  }

  copy(): Uint32Array {
    return this.words.slice();
  }

  private toggleHash(bit: number): void {
    this.h1 = (this.h1 ^ this.zobrist.low[bit]) >>> 0;
    this.h2 = (this.h2 ^ this.zobrist.high[bit]) >>> 0;
  }
}

/** Fixed pseudo-random keys per element (deterministic: the checker must be reproducible). */
export class Zobrist {
  readonly low: Uint32Array;
  readonly high: Uint32Array;

  constructor(size: number) {
    this.low = new Uint32Array(size);
    this.high = new Uint32Array(size);
    let x = 0x2545f491;
    const next = () => {
      // xorshift32: good enough spread for hashing, and no dependence on any Rng.
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return x >>> 0;
    };
    for (let i = 0; i < size; i++) {
      this.low[i] = next();
      this.high[i] = next();
    }
  }
}

export function sameWords(a: Uint32Array, b: Uint32Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** True when every bit of `a` is also in `b`. */
export function isSubset(a: Uint32Array, b: Uint32Array): boolean {
  for (let i = 0; i < a.length; i++) if ((a[i] & ~b[i]) !== 0) return false;
  return true;
}

export function hasBit(words: Uint32Array, bit: number): boolean {
  return (words[bit >>> 5] & (1 << (bit & 31))) !== 0;
}

/** A copy of `words` with `bit` set: sets shared by several search frames are never mutated. */
export function withBit(words: Uint32Array, bit: number): Uint32Array {
  const copy = words.slice();
  copy[bit >>> 5] |= 1 << (bit & 31);
  return copy;
}
