import { run, type Run } from './processes.js';

/**
 * The npm client as these tests use it: its user config is a temporary npmrc (the registry, the
 * token), never ~/.npmrc, and its cache a directory of the test run, shared by every install of
 * the run so each tarball is fetched once.
 */
export interface NpmClient {
  registry: string;
  userconfig: string;
  cache: string;
}

/** `npm ...args` in `cwd` with the client's config and registry, to its end whatever its exit. */
export function npmRun(
  client: NpmClient,
  cwd: string,
  args: readonly string[],
  timeoutMs = 300_000,
): Promise<Run> {
  return run(
    'npm',
    [
      ...args,
      '--userconfig',
      client.userconfig,
      '--cache',
      client.cache,
      '--registry',
      client.registry,
    ],
    {
      cwd,
      timeoutMs,
    },
  );
}

/** `npm ...args` as npmRun, throwing the output unless it exits 0. */
export async function npm(
  client: NpmClient,
  cwd: string,
  args: readonly string[],
  timeoutMs = 300_000,
): Promise<Run> {
  const result = await npmRun(client, cwd, args, timeoutMs);
  if (result.code !== 0) throw new Error(result.summary);
  return result;
}

/** `npm install ...specs` from the registry alone, revalidating what the cache holds. */
export function npmInstall(
  client: NpmClient,
  cwd: string,
  specs: readonly string[] = [],
): Promise<Run> {
  return npm(client, cwd, ['install', ...specs, '--prefer-online', '--no-audit', '--no-fund']);
}
