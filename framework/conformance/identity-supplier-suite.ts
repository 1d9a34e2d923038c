import type { ExecutionContext, TestFn } from 'ava';
import fc from 'fast-check';
import {
  type IdentitySupplier,
  InvalidIdentityError,
  OPERATION_ID_PATTERN,
  type Rng,
} from '@baton/contracts';
import { SeededRng } from './seeded-rng.js';

/** The contract's rule for an operation identity, re-exported for suites and tests. */
export const IDEMPOTENCY_KEY_PATTERN = OPERATION_ID_PATTERN;

export interface InvalidAuthorityCase {
  input: string;
  /** What the error's reason must say: the rule the input breaks. */
  why: RegExp;
}

export interface IdentitySupplierSuiteOptions {
  test: TestFn;
  /** Prefixes every test title, e.g. "npm identity". */
  name: string;
  /** A fresh supplier drawing its randomness from `rng`. */
  factory: (rng: Rng) => IdentitySupplier;
  /** Authorities the ecosystem accepts (any spelling it accepts, not only the normal form). */
  valid: readonly string[];
  /** Inputs it refuses, each with the rule its reason must name. */
  invalid: readonly InvalidAuthorityCase[];
  /** Pairs of spellings of one authority: both must map to the same id. */
  equivalent: readonly (readonly [string, string])[];
  /** Pairs of valid names of two different authorities: normalisation must not merge them. */
  distinct?: readonly (readonly [string, string])[];
  /** Strings shaped like the ecosystem's names, to aim the property tests near its grammar. */
  nameLike?: fc.Arbitrary<string>;
}

const VALID_KEYS = [
  '5f0c-drain-proj',
  'a',
  '0',
  'A.b_c:d~e-f',
  '0f6c3e3a-7a5e-4d2b-9c1e-2b4d6f8a0c1e',
  '01HZX3J8K9Q2W4E6R8T0Y2U4I6',
  'x'.repeat(128),
];

const INVALID_KEYS: readonly InvalidAuthorityCase[] = [
  { input: '', why: /empty/ },
  { input: 'x'.repeat(129), why: /129 characters.*128/ },
  { input: ' padded', why: /space/ },
  { input: 'two words', why: /space/ },
  { input: 'tab\there', why: /U\+0009/ },
  { input: 'line\nbreak', why: /U\+000A/ },
  { input: 'nul\u0000', why: /U\+0000/ },
  { input: 'café', why: /U\+00E9/ },
  { input: 'a/b', why: /"\/"/ },
  { input: 'quote"d', why: /"\\""/ },
  { input: '100%', why: /"%"/ },
];

/** Runs the IdentitySupplier contract against one implementation. */
export function identitySupplierSuite(options: IdentitySupplierSuiteOptions): void {
  const { test, name, factory, valid, invalid, equivalent, distinct = [] } = options;
  if (valid.length === 0 || invalid.length === 0) {
    throw new Error(
      `identitySupplierSuite(${name}): give at least one valid and one invalid authority`,
    );
  }
  const fresh = () => factory(new SeededRng(1));
  const nameLike = options.nameLike ?? fc.constantFrom(...valid);

  test(`${name}: declares the ecosystem it serves`, (t) => {
    const supplier = fresh();
    t.is(typeof supplier.ecosystem, 'string');
    t.true(supplier.ecosystem.length > 0, 'ecosystem must be a non-empty name');
  });

  test(`${name}: accepts valid authorities, and normalising twice changes nothing`, (t) => {
    const supplier = fresh();
    for (const raw of valid) {
      const id = supplier.authority(raw);
      t.is(typeof id, 'string', `authority(${JSON.stringify(raw)})`);
      t.is(
        supplier.authority(id),
        id,
        `authority(authority(${JSON.stringify(raw)})) must be ${JSON.stringify(id)}`,
      );
      t.is(
        supplier.authority(raw),
        id,
        `authority(${JSON.stringify(raw)}) must not change between calls`,
      );
    }
  });

  test(`${name}: refuses invalid authorities, naming the input and the rule it breaks`, (t) => {
    const supplier = fresh();
    for (const { input, why } of invalid) {
      const error = t.throws(
        () => supplier.authority(input),
        { instanceOf: InvalidIdentityError },
        JSON.stringify(input),
      );
      if (!error) continue;
      t.is(error.kind, 'authority');
      t.is(error.input, input);
      t.is(error.code, 'invalid_identity');
      t.regex(error.reason, why, `reason for ${JSON.stringify(input)}`);
      // Long inputs are shortened in the message (the whole stays in `input`): the start names it.
      t.true(
        error.message.includes(JSON.stringify(input).slice(0, 120)),
        `message must name the input: ${error.message}`,
      );
    }
  });

  if (equivalent.length > 0) {
    test(`${name}: maps equivalent spellings to one authority`, (t) => {
      const supplier = fresh();
      for (const [a, b] of equivalent) {
        t.is(
          supplier.authority(a),
          supplier.authority(b),
          `${JSON.stringify(a)} and ${JSON.stringify(b)}`,
        );
      }
    });
  }

  if (distinct.length > 0) {
    test(`${name}: keeps different authorities apart`, (t) => {
      const supplier = fresh();
      for (const [a, b] of distinct) {
        t.not(
          supplier.authority(a),
          supplier.authority(b),
          `${JSON.stringify(a)} and ${JSON.stringify(b)}`,
        );
      }
    });
  }

  test(`${name}: refuses a non-string authority or key as an invalid identity`, (t) => {
    const supplier = fresh();
    for (const value of [undefined, null, 42, {}, ['a']]) {
      const error = t.throws(() => supplier.authority(value as unknown as string), {
        instanceOf: InvalidIdentityError,
      });
      t.is(error?.kind, 'authority');
    }
    for (const value of [null, 42, {}, ['a']]) {
      const error = t.throws(() => supplier.operation(value as unknown as string), {
        instanceOf: InvalidIdentityError,
      });
      t.is(error?.kind, 'operation');
    }
  });

  test(`${name}: authority() is total: any string is either refused or a fixed point`, (t) => {
    const supplier = fresh();
    const input = fc.oneof(
      nameLike,
      nameLike.map((s) => s.toUpperCase()),
      fc.tuple(nameLike, fc.string({ maxLength: 3 }), nameLike).map(([a, b, c]) => a + b + c),
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.string({ maxLength: 300 }),
    );
    holds(
      t,
      fc.property(input, (raw) => {
        let id: string;
        try {
          id = supplier.authority(raw);
        } catch (error) {
          if (!(error instanceof InvalidIdentityError)) throw error;
          return error.kind === 'authority' && error.input === raw && error.reason.length > 0;
        }
        return typeof id === 'string' && supplier.authority(id) === id;
      }),
    );
  });

  test(`${name}: operation(key) returns a well-formed Idempotency-Key verbatim`, (t) => {
    const supplier = fresh();
    for (const key of VALID_KEYS) t.is<string, string>(supplier.operation(key), key);
  });

  test(`${name}: operation(key) refuses a malformed key, naming it and the rule`, (t) => {
    const supplier = fresh();
    for (const { input, why } of INVALID_KEYS) {
      const error = t.throws(
        () => supplier.operation(input),
        { instanceOf: InvalidIdentityError },
        JSON.stringify(input),
      );
      if (!error) continue;
      t.is(error.kind, 'operation');
      t.is(error.input, input);
      t.regex(error.reason, why, `reason for ${JSON.stringify(input)}`);
      t.true(
        error.message.includes(JSON.stringify(input)),
        `message must name the key: ${error.message}`,
      );
    }
  });

  test(`${name}: operation(key) accepts exactly the documented Idempotency-Key pattern`, (t) => {
    const supplier = fresh();
    const key = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9._:~-]{1,130}$/),
      fc.string({ unit: 'binary', maxLength: 140 }),
      fc.string({ maxLength: 140 }),
    );
    holds(
      t,
      fc.property(key, (raw) => {
        try {
          return supplier.operation(raw) === raw && IDEMPOTENCY_KEY_PATTERN.test(raw);
        } catch (error) {
          if (!(error instanceof InvalidIdentityError)) throw error;
          return error.kind === 'operation' && !IDEMPOTENCY_KEY_PATTERN.test(raw);
        }
      }),
    );
  });

  test(`${name}: operation() mints unique keys that are themselves valid keys`, (t) => {
    const supplier = fresh();
    const minted = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const id = supplier.operation();
      t.regex(id, IDEMPOTENCY_KEY_PATTERN);
      t.is(supplier.operation(id), id, `a minted key must be accepted back: ${id}`);
      minted.add(id);
    }
    t.is(minted.size, 2000, 'two mints must never repeat');
  });

  test(`${name}: operation() draws from the injected Rng, so a seed replays the same keys`, (t) => {
    const mintFive = (seed: number) => {
      const rng = new CountingRng(new SeededRng(seed));
      const supplier = factory(rng);
      const ids = Array.from({ length: 5 }, () => supplier.operation());
      return { ids, draws: rng.draws };
    };
    const first = mintFive(42);
    t.true(first.draws > 0, 'minting must use the injected Rng');
    t.deepEqual(mintFive(42).ids, first.ids, 'one seed, one sequence');
    t.notDeepEqual(mintFive(43).ids, first.ids, 'another seed, another sequence');
  });
}

/** Asserts a fast-check property, reporting the counterexample and the seed that replays it. */
function holds(
  t: ExecutionContext,
  property: fc.IPropertyWithHooks<any> | fc.IProperty<any>,
): void {
  const details = fc.check(property, { numRuns: 400 });
  t.false(details.failed, fc.defaultReportMessage(details) ?? 'property failed');
}

/** Forwards to another Rng and counts the draws, to prove the supplier uses what it was given. */
class CountingRng implements Rng {
  draws = 0;
  constructor(private readonly inner: Rng) {}
  next(): number {
    this.draws++;
    return this.inner.next();
  }
  int(maxExclusive: number): number {
    this.draws++;
    return this.inner.int(maxExclusive);
  }
  hex(bytes: number): string {
    this.draws++;
    return this.inner.hex(bytes);
  }
}
