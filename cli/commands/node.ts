import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { cliCall, upControlApi, type UpControlApi } from '../api-client.js';
import { FailedError, HttpRefusal, UnreachableError } from '../cli-errors.js';
import { processIsAlive } from '@baton/kernel';
import { outputFor, type CliContext } from '../context.js';
import { readClusterRecord } from '../local-cluster/cluster-record.js';
import { controlRecordPath, type UpControlRecord } from '../local-cluster/control-server.js';
import { fetchTrustingCa } from '../local-cluster/fetch-trusting-ca.js';
import type { NodeState } from '../local-cluster/node-supervisor.js';
import { table } from '../table.js';
import { registerMaintenanceCommand } from '../streams/maintenance-command.js';

interface RunningUp {
  variant: 'stream' | 'authority';
  dataDir: string;
  control: UpControlRecord;
  token: string;
  /** Reaches the control listener: trusting the cluster CA when it serves TLS. */
  send: typeof fetch;
}

/**
 * `baton node list|stop|start`: the node processes of the local cluster a running `baton up`
 * owns. A node stopped here (or one that died) stays down, the others keep serving, until it is
 * started again here; it then dies with its `baton up` like the others.
 */
export function registerNode(program: Command, ctx: CliContext): void {
  const node = program
    .command('node')
    .description('stop and start one node of the local cluster `baton up` runs, or list them; put a stream node in maintenance')
    .addHelpText(
      'after',
      `
These talk to the running "baton up" through <data-dir>/up.json, with the token in
<data-dir>/cluster.json; --data-dir is the one "baton up" was given (for --variant authority,
the same directory: its authority/ subdirectory is looked at too). Under "baton up --tls" that
listener serves HTTPS with a certificate of the cluster CA, which these trust by themselves.

Examples:
  baton node list
  baton node stop n2      # n2's process ends; the cluster goes on with two voters
  baton node start n2     # n2 recovers its WAL and Raft log and catches up`,
    );
  const dataDirOption = (command: Command) =>
    command.option('--data-dir <dir>', 'the data dir of the running baton up', '.baton/data');

  dataDirOption(node.command('list'))
    .description('each node: running (pid), stopped, or exited and why (of both variants when both run from the data dir)')
    .action(async (options: { dataDir: string }, command: Command) => {
      const output = outputFor(ctx, command);
      const ups = await runningUps(ctx, options.dataDir);
      const nodes: (NodeState & { variant: string })[] = [];
      for (const up of ups) {
        const body = await call(up, (client) => client.GET('/nodes'));
        nodes.push(...body.nodes.map((n) => ({ ...n, variant: up.variant })));
      }
      output.result({ nodes }, (r, view) =>
        table(
          ['NODE', 'VARIANT', 'STATE', 'PID', 'LAST EXIT'],
          r.nodes.map((n) => [
            n.id,
            n.variant,
            n.state,
            n.state === 'running' && n.pid ? String(n.pid) : '-',
            n.state === 'running' ? '' : n.state === 'stopped' ? 'stopped on request' : (n.cause ?? ''),
          ]),
          view,
        ),
      );
    });

  dataDirOption(node.command('stop'))
    .description('stop one node process (SIGTERM); the others keep serving')
    .argument('<name>', 'the node: n1, n2, n3 (stream) or east-1, west-1, north-1 (authority)')
    .action(async (name: string, options: { dataDir: string }, command: Command) => {
      const output = outputFor(ctx, command);
      const up = await runningUp(ctx, options.dataDir, name);
      const body = await call(up, (client) => client.POST('/nodes/{node}/stop', { params: { path: { node: name } } }));
      output.result(body, () => `stopped ${name}; "baton node start ${name}" starts it again`);
    });

  dataDirOption(node.command('start'))
    .description('start a node that was stopped or died; waits until it listens')
    .argument('<name>', 'the node: n1, n2, n3 (stream) or east-1, west-1, north-1 (authority)')
    .action(async (name: string, options: { dataDir: string }, command: Command) => {
      const output = outputFor(ctx, command);
      const up = await runningUp(ctx, options.dataDir, name);
      const body = await call(up, (client) => client.POST('/nodes/{node}/start', { params: { path: { node: name } } }), 60_000);
      output.result(body, (r) => `started ${name} (pid ${r.node.pid ?? '?'})`);
    });

  registerMaintenanceCommand(node, ctx);
}

/** The `baton up` running from `dataDir` (or its authority/ subdirectory) that has `name`, if given. */
async function runningUp(ctx: CliContext, dataDirOption: string, name?: string): Promise<RunningUp> {
  const found = await runningUps(ctx, dataDirOption);
  if (!name || found.length === 1) return found[0];
  const stream = found.find((up) => up.variant === 'stream');
  const authority = found.find((up) => up.variant === 'authority');
  return /^[a-z]+-\d+$/.test(name) && authority ? authority : (stream ?? found[0]);
}

/** Every `baton up` running from `dataDir`: the stream variant's there, the authority variant's in its authority/ subdirectory. */
async function runningUps(ctx: CliContext, dataDirOption: string): Promise<RunningUp[]> {
  const root = resolve(ctx.cwd, dataDirOption);
  const found: RunningUp[] = [];
  for (const [variant, dataDir] of [['stream', root], ['authority', join(root, 'authority')]] as const) {
    const control = await readControl(dataDir);
    const record = control && (await readClusterRecord(dataDir));
    if (control && record && processIsAlive(control.pid)) {
      found.push({ variant, dataDir, control, token: record.token, send: controlFetch(dataDir, control, record.tls === true) });
    }
  }
  if (found.length === 0) {
    throw new FailedError(
      'not-running',
      `no baton up is running from ${root}: start the cluster with "baton up" (or give the --data-dir it runs from)`,
    );
  }
  return found;
}

async function readControl(dataDir: string): Promise<UpControlRecord | undefined> {
  try {
    return JSON.parse(await readFile(controlRecordPath(dataDir), 'utf8')) as UpControlRecord;
  } catch {
    return undefined;
  }
}

/**
 * How to reach the control listener `control` names. A cluster that serves TLS is reached over
 * https trusting its CA, or not at all: an http:// address there is refused before the token
 * could be sent in clear.
 */
function controlFetch(dataDir: string, control: UpControlRecord, tls: boolean): typeof fetch {
  const https = control.url.startsWith('https:');
  if (tls && !(https && control.caFile)) {
    throw new FailedError(
      'control-not-tls',
      `${controlRecordPath(dataDir)} names ${control.url} for a cluster that serves TLS, so the admin token is not sent to it: ` +
        'stop that baton up and start it again (it serves its control listener over https)',
    );
  }
  if (!https || !control.caFile) return fetch;
  try {
    return fetchTrustingCa(control.caFile);
  } catch (error) {
    throw new FailedError(
      'control-ca-unreadable',
      `cannot read the cluster CA ${control.caFile} that ${controlRecordPath(dataDir)} names (${(error as Error).message}): is --data-dir the one baton up runs from?`,
      { cause: error },
    );
  }
}

/** One call to the control listener of `up`; its failures in words about that baton up. */
async function call<T>(up: RunningUp, send: (client: UpControlApi) => Promise<{ data?: T; response: Response }>, timeoutMs?: number): Promise<T> {
  try {
    const client = upControlApi({ url: up.control.url, token: up.token, fetch: up.send }, timeoutMs ? { timeoutMs } : {});
    return await cliCall(send(client));
  } catch (error) {
    if (error instanceof UnreachableError) {
      throw new UnreachableError(
        error.address,
        `the baton up that wrote ${controlRecordPath(up.dataDir)} (pid ${up.control.pid}) does not answer; is it still running?`,
        { cause: error },
      );
    }
    if (error instanceof HttpRefusal && typeof error.problem.detail === 'string') {
      throw new FailedError(error.code, error.problem.detail, { cause: error });
    }
    throw error;
  }
}
