import { randomBytes, randomInt } from 'node:crypto';
import type { Rng } from '@baton/contracts';

/** Cryptographic randomness from the OS, for production. Tests use the seeded one. */
export class SystemRng implements Rng {
  next(): number {
    // 48 random bits: exactly representable in a double, and uniform over [0, 1).
    return randomBytes(6).readUIntBE(0, 6) / 2 ** 48;
  }

  int(maxExclusive: number): number {
    return randomInt(0, maxExclusive);
  }

  hex(bytes: number): string {
    return randomBytes(bytes).toString('hex');
  }
}
