import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';

/** A fresh directory for one test, removed after it. */
export async function tempDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), '{{name}}-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Waits for a condition with a deadline (the node registers itself just after it starts). */
export async function eventually(condition: () => Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
