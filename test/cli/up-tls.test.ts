import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { writeClusterRecord } from '@baton/cli/internal/local-cluster/cluster-record.js';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { runBaton } from './run-baton.js';
import { runShellSession } from './shell-session.js';
import { workDir } from './temp-project.js';
import { asBaton, printedBatonCommands, startUp, startUpOnFreshPorts, upAndReady } from './up-process.js';

const NODE_LINE = /^\s+(n[123])\s+(\S+)\s+log:/gm;

test('baton up --tls serves every node over https with keys 0600; the printed exports make baton trust its CA; plain http is refused with the fix named; a restart keeps TLS and refuses --no-tls', async (t) => {
  t.timeout(240_000);
  const { up, cwd, dataDir } = await startUpOnFreshPorts(t, ['--tls'], /Ctrl-C stops the cluster/);
  const printed = up.stdout();
  const urls = [...printed.matchAll(NODE_LINE)].map((m) => m[2]);
  t.is(urls.length, 3);
  for (const url of urls) t.regex(url, /^https:\/\/127\.0\.0\.1:\d+$/);
  t.regex(printed, /^dashboard: https:\/\/127\.0\.0\.1:\d+\/ui\//m);
  const token = /admin token: (\S+)/.exec(printed)![1];
  const caFile = join(dataDir, 'tls', 'ca.pem');
  t.regex(printed, new RegExp(`curl --cacert ${caFile} `), 'curl is shown with the CA to trust');

  const commands = printedBatonCommands(printed);
  t.deepEqual(commands.slice(0, 2), [
    `export NODE_EXTRA_CA_CERTS=${caFile}`,
    `export BATON_URL=${urls[0]} BATON_TOKEN=${token}`,
  ]);
  // As a person pastes them into a new terminal: the exports, then the status they suggest.
  const status = commands.find((c) => asBaton(c) === 'baton status')!;
  const steps = await runShellSession([...commands.slice(0, 2), status], { cwd: process.cwd() });
  const shown = steps[2];
  t.is(shown.code, ExitCode.Ok, shown.output);
  t.regex(shown.output, /stream cluster, seen from n1: leader n[123]/);
  for (const url of urls) t.true(shown.output.includes(url), `${url} in the status`);

  // Without the CA (this process never trusted it) and in plain HTTP: exit 3, the fix named.
  const untrusted = await runBaton(['--url', urls[0], '--token', token, 'status'], { cwd });
  t.is(untrusted.code, ExitCode.Unreachable);
  t.regex(untrusted.stderr, /not trusted .*NODE_EXTRA_CA_CERTS/);
  const plain = await runBaton(['--url', urls[0].replace('https:', 'http:'), '--token', token, 'status'], { cwd });
  t.is(plain.code, ExitCode.Unreachable);
  t.regex(plain.stderr, /if the node serves HTTPS, give an https:\/\/ address/);

  const tlsDir = join(dataDir, 'tls');
  t.is((await stat(tlsDir)).mode & 0o777, 0o700);
  const keys = (await readdir(tlsDir)).filter((name) => name.endsWith('.key')).sort();
  // The members' keys, and the one of the control listener baton node talks to.
  t.deepEqual(keys, ['ca.key', 'n1.key', 'n2.key', 'n3.key', 'up-control.key']);
  for (const key of keys) t.is((await stat(join(tlsDir, key))).mode & 0o777, 0o600, key);
  const ca = await readFile(caFile, 'utf8');

  up.child.kill('SIGINT');
  t.is(await up.exited, 0, up.stderr());
  const refused = await runBaton(['up', '--no-tls', '--data-dir', dataDir], { cwd });
  t.is(refused.code, ExitCode.Usage);
  t.regex(refused.stderr, /serve TLS: run baton up without --no-tls/);

  // Without the flag, the recorded choice holds: same addresses, same CA, still https.
  const again = startUp(t, ['--data-dir', dataDir, '--json']);
  await upAndReady(again, /^\}$/m);
  const resumed = JSON.parse(again.stdout()) as { resumed: boolean; caFile: string; nodes: { url: string }[] };
  t.true(resumed.resumed);
  t.deepEqual(resumed.nodes.map((n) => n.url), urls);
  t.is(resumed.caFile, caFile);
  t.is(await readFile(caFile, 'utf8'), ca, 'clients keep trusting the same CA');
  again.child.kill('SIGTERM');
  t.is(await again.exited, 0, again.stderr());
});

test('baton up --variant authority --tls: control and public listeners on https, the printed exports reach the members, proj placed over TLS', async (t) => {
  t.timeout(240_000);
  const { up, dataDir } = await startUpOnFreshPorts(t, ['--variant', 'authority', '--tls'], /Ctrl-C stops the cluster/);
  const printed = up.stdout();
  const listeners = [...printed.matchAll(/^\s+\S+-1\s+\w+\s+control (\S+)\s+public (\S+)/gm)].flatMap((m) => [m[1], m[2]]);
  t.is(listeners.length, 6);
  for (const url of listeners) t.regex(url, /^https:\/\/127\.0\.0\.1:\d+$/);
  // Read over TLS by baton up itself, which trusts the CA it generated.
  t.regex(printed, /authority proj: home east, epoch 1/);
  const caFile = join(dataDir, 'authority', 'tls', 'ca.pem');
  const commands = printedBatonCommands(printed);
  t.is(commands[0], `export NODE_EXTRA_CA_CERTS=${caFile}`);
  const members = commands.find((c) => asBaton(c) === 'baton authority members')!;
  const steps = await runShellSession([...commands.slice(0, 2), members], { cwd: process.cwd() });
  t.is(steps[2].code, ExitCode.Ok, steps[2].output);
  t.regex(steps[2].output, /east-1\s+east[\s\S]*west-1\s+west[\s\S]*north-1\s+north/);
  // baton node finds the authority/ subdirectory's control listener, on https, trusting its CA.
  const control = JSON.parse(await readFile(join(dataDir, 'authority', 'up.json'), 'utf8')) as { url: string; caFile: string };
  t.regex(control.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  t.is(control.caFile, caFile);
  const listed = await runBaton(['node', 'list', '--data-dir', dataDir], { cwd: process.cwd() });
  t.is(listed.code, ExitCode.Ok, listed.stderr);
  t.regex(listed.stdout, /east-1\s+authority\s+running[\s\S]*west-1\s+authority\s+running[\s\S]*north-1\s+authority\s+running/);
  up.child.kill('SIGTERM');
  t.is(await up.exited, 0, up.stderr());
});

test('baton up --tls on a data dir whose cluster serves plain HTTP is a usage error, before any node starts', async (t) => {
  const cwd = await workDir(t);
  const dataDir = join(cwd, 'data');
  await writeClusterRecord(dataDir, { variant: 'stream', ports: { n1: 7701, n2: 7702, n3: 7703 }, token: 'a-plain-cluster-token' });
  const run = await runBaton(['up', '--tls', '--data-dir', dataDir], { cwd });
  t.is(run.code, ExitCode.Usage);
  t.regex(run.stderr, /serve plain HTTP: run baton up without --tls/);
  await t.throwsAsync(stat(join(dataDir, 'n1')), undefined, 'no node config was written');
});

test('baton up --help documents --tls: what it generates, the export that trusts the CA, and that a data dir keeps its choice', async (t) => {
  const run = await runBaton(['up', '--help'], { cwd: await workDir(t) });
  t.is(run.code, ExitCode.Ok);
  for (const shown of ['--tls', '--no-tls', 'NODE_EXTRA_CA_CERTS', '--cacert', 'keys 0600', 'baton up --tls'])
    t.true(run.stdout.includes(shown), shown);
});
