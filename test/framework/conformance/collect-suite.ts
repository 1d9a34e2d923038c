import type { ExecutionContext, TestFn } from 'ava';

export type CollectedTest = { title: string; run: (t: ExecutionContext) => unknown };

/**
 * Registers a conformance suite into a list instead of with ava, so a test can run the
 * suite's tests against a deliberately broken store (through `t.try`) and check they fail.
 */
export function collectSuite(register: (test: TestFn) => void): CollectedTest[] {
  const collected: CollectedTest[] = [];
  const test = ((title: string, run: (t: ExecutionContext) => unknown) => {
    collected.push({ title, run });
  }) as unknown as TestFn;
  register(test);
  return collected;
}

/** The one collected test whose title contains `fragment`. */
export function findTest(tests: CollectedTest[], fragment: string): CollectedTest {
  const matches = tests.filter((c) => c.title.includes(fragment));
  if (matches.length !== 1) {
    throw new Error(`expected one suite test titled like ${JSON.stringify(fragment)}, found ${matches.length}`);
  }
  return matches[0];
}

/** Runs a collected test as an attempt and reports whether it passed; the attempt is discarded. */
export async function attemptPasses(t: ExecutionContext, collected: CollectedTest): Promise<boolean> {
  const attempt = await t.try(collected.title, (inner) => collected.run(inner) as Promise<void>);
  attempt.discard();
  return attempt.passed;
}
