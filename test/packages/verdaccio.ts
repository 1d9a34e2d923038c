import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freeLoopbackPorts } from '@baton/cli/internal/local-cluster/free-ports.js';
import { eventually } from '../hosts/eventually.js';
import type { NpmClient } from './npm-client.js';
import { cleanEnv } from './processes.js';
import { CHECKOUT } from './workspaces.js';

/** The public registry third-party packages come from, through Verdaccio's uplink. */
export const PUBLIC_REGISTRY = 'https://registry.npmjs.org/';

export interface LocalRegistry extends NpmClient {
  /** Verdaccio's output so far, for a failure message. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Verdaccio's config: @baton/* lives here only (never looked up upstream, so no package of that
 * name elsewhere can be installed instead), publishable by an authenticated user; everything
 * else is proxied to the public registry.
 */
function verdaccioConfig(root: string): string {
  const proxy = process.env.https_proxy ?? process.env.HTTPS_PROXY;
  return [
    `storage: ${JSON.stringify(join(root, 'storage'))}`,
    'auth:',
    '  htpasswd:',
    `    file: ${JSON.stringify(join(root, 'htpasswd'))}`,
    '    max_users: 10',
    'uplinks:',
    '  npmjs:',
    `    url: ${PUBLIC_REGISTRY}`,
    '    timeout: 60s',
    '    max_fails: 5',
    ...(proxy ? [`https_proxy: ${JSON.stringify(proxy)}`] : []),
    'packages:',
    "  '@baton/*':",
    '    access: $all',
    '    publish: $authenticated',
    "  '**':",
    '    access: $all',
    '    publish: $authenticated',
    '    proxy: npmjs',
    'web:',
    '  enable: false',
    'max_body_size: 100mb',
    'log: { type: stdout, format: pretty, level: warn }',
    '',
  ].join('\n');
}

/**
 * Starts Verdaccio (the devDependency) on 127.0.0.1 at a free port with its storage and config
 * under `root`, adds a user and writes an npmrc with that user's token: the client publishes and
 * installs through it. Fails naming the public registry when the uplink cannot reach it.
 */
export async function startLocalRegistry(root: string): Promise<LocalRegistry> {
  await mkdir(join(root, 'storage'), { recursive: true });
  const config = join(root, 'verdaccio.yaml');
  await writeFile(config, verdaccioConfig(root));
  const [port] = await freeLoopbackPorts(1);
  const url = `http://127.0.0.1:${port}/`;
  const child = spawn(
    process.execPath,
    [
      join(CHECKOUT, 'node_modules/verdaccio/bin/verdaccio'),
      '--config',
      config,
      '--listen',
      `127.0.0.1:${port}`,
    ],
    { cwd: root, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  let exited: number | null | undefined;
  const closed = new Promise<void>((resolve) =>
    child.on('close', (code) => {
      exited = code;
      resolve();
    }),
  );
  const registry: LocalRegistry = {
    registry: url,
    userconfig: join(root, 'npmrc'),
    cache: join(root, 'npm-cache'),
    log: () => output,
    stop: async () => {
      if (exited === undefined) child.kill('SIGKILL');
      await closed;
    },
  };
  try {
    // A throw (nothing listening yet) counts as not yet; an exit ends the wait at once.
    await eventually(
      async () => exited !== undefined || (await fetch(`${url}-/ping`)).ok,
      `verdaccio to answer at ${url}`,
      60_000,
    );
    if (exited !== undefined) throw new Error(`verdaccio exited ${exited}:\n${output}`);
    const token = await addUser(url);
    await writeFile(
      registry.userconfig,
      [
        `registry=${url}`,
        `//127.0.0.1:${port}/:_authToken=${token}`,
        'update-notifier=false',
        'fund=false',
        'audit=false',
        '',
      ].join('\n'),
    );
    await checkUplink(url, registry.log);
  } catch (error) {
    await registry.stop();
    throw error;
  }
  return registry;
}

/** Adds a user to Verdaccio's htpasswd (what `npm adduser` does) and returns its token. */
async function addUser(url: string): Promise<string> {
  const response = await fetch(`${url}-/user/org.couchdb.user:baton-publisher`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'baton-publisher', password: 'registry-test-only' }),
  });
  const body = (await response.json()) as { token?: string };
  if (!response.ok || !body.token)
    throw new Error(`verdaccio refused the user: ${response.status} ${JSON.stringify(body)}`);
  return body.token;
}

/** A third-party package's metadata comes through the uplink, or the test stops saying why. */
async function checkUplink(url: string, log: () => string): Promise<void> {
  let problem: string;
  try {
    const response = await fetch(`${url}zod`, {
      headers: { accept: 'application/vnd.npm.install-v1+json' },
      signal: AbortSignal.timeout(90_000),
    });
    if (response.ok) return;
    problem = `GET ${url}zod answered ${response.status} ${await response.text()}`;
  } catch (error) {
    problem = `GET ${url}zod failed: ${String(error)}`;
  }
  const proxy = process.env.https_proxy ?? process.env.HTTPS_PROXY;
  const through = proxy ? `Verdaccio's uplink, by the proxy ${proxy}` : "Verdaccio's uplink";
  throw new Error(
    `The public npm registry (${PUBLIC_REGISTRY}) is unreachable through ${through} (${problem}). ` +
      'This test installs the third-party dependencies of the published @baton/* packages from it ' +
      `and cannot run without it.\nVerdaccio's log:\n${log()}`,
  );
}
