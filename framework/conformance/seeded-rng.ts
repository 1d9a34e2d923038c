import type { Rng } from '@baton/contracts';

/**
 * A deterministic Rng (xoshiro128**, seeded through splitmix32), so one seed replays a whole
 * simulated run. `fork(label)` derives an independent stream: adding randomness to one
 * subsystem then does not shift the choices of every other one.
 */
export class SeededRng implements Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(readonly seed: number) {
    let x = seed >>> 0;
    const splitmix = () => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = splitmix();
    this.s1 = splitmix();
    this.s2 = splitmix();
    this.s3 = splitmix();
  }

  private nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.s1 << 9) >>> 0;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  next(): number {
    return this.nextUint32() / 4294967296;
  }

  int(maxExclusive: number): number {
    if (!(maxExclusive >= 1)) throw new RangeError(`int(${maxExclusive}): bound must be >= 1`);
    return Math.floor(this.next() * maxExclusive);
  }

  hex(bytes: number): string {
    let out = '';
    for (let i = 0; i < bytes; i++) out += this.int(256).toString(16).padStart(2, '0');
    return out;
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  fork(label: string): SeededRng {
    let h = this.seed >>> 0;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
    return new SeededRng(h);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
