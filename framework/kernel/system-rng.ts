import { randomBytes, randomInt } from 'node:crypto';
import type { Rng } from '../contracts/rng.js';

/** Cryptographic randomness from the OS, for production. Tests use the seeded one. */
export class SystemRng implements Rng {
  next(): number {
    return randomInt(0, 2 ** 48) / 2 ** 48;
  }

  int(maxExclusive: number): number {
    return randomInt(0, maxExclusive);
  }

  hex(bytes: number): string {
    return randomBytes(bytes).toString('hex');
  }
}
