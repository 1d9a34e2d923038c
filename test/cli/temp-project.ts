import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { ExecutionContext } from 'ava';

/** A fresh working directory for one test, removed after it. */
export async function workDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-cli-'));
  // BATON_KEEP_TEST_DIRS=1 keeps the directory (the members' logs and data) to look at later.
  if (process.env.BATON_KEEP_TEST_DIRS) t.log(`kept: ${dir}`);
  else t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Every file under `dir`, as sorted relative paths with their contents. */
export async function filesUnder(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (current: string) => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) await walk(path);
      else files.set(relative(dir, path), await readFile(path, 'utf8'));
    }
  };
  await walk(dir);
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)));
}
