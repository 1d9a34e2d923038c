import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import type { z } from 'zod';
import { loadConfig } from '@baton/kernel/internal/config.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';

/** The example configs users copy, one directory per host. */
export type ExampleHost = 'authority-node' | 'stream-node';

/**
 * Where a host keeps an example config. The tests run from dist/test/...: the example is read
 * where it is kept, in the source tree.
 */
export function examplePath(host: ExampleHost, name: string): string {
  return fileURLToPath(new URL(`../../../hosts/${host}/examples/${name}`, import.meta.url));
}

/** An example loaded as a deployment loads it: through loadConfig, with `env` as the overrides. */
export function loadExample<S extends z.ZodType>(
  schema: S,
  host: ExampleHost,
  name: string,
  env: NodeJS.ProcessEnv = {},
): Promise<z.output<S>> {
  return loadConfig(schema, { file: examplePath(host, name), env });
}

/**
 * An example loaded with its data dir moved to a temporary directory removed after the test, so
 * building the host touches nothing outside it.
 */
export async function loadExampleInTempDir<S extends z.ZodType>(
  t: ExecutionContext,
  schema: S,
  host: ExampleHost,
  name: string,
  env: NodeJS.ProcessEnv,
): Promise<z.output<S>> {
  const dir = await makeTempDir(`${host}-${name.replace(/\.json$/, '')}-example`);
  t.teardown(() => dir.remove());
  return loadExample(schema, host, name, { BATON__dataDir: dir.path, ...env });
}
