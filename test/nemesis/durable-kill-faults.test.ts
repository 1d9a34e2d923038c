import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { eventually } from '../hosts/eventually.js';
import type { DurableWindow } from './aimed-kill.js';
import { prepareMember, type NemesisCluster } from './cluster.js';
import { durableKillFaults, type AimedKills } from './durable-kill-faults.js';

/**
 * A stand-in for a member: replaces `data/value` through `data/value.tmp` in a loop. With
 * `refuseRestart` in its config it refuses every start after its first, as a member that finds
 * its files damaged does.
 */
const MEMBER = `
import { existsSync, readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
const dir = process.argv[2].replace(/config\\.json$/, 'data');
const { refuseRestart } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
if (refuseRestart && existsSync(dir + '/started')) {
  console.error('refusing to start: data/value is damaged');
  process.exit(1);
}
await writeFile(dir + '/started', '');
await writeFile(dir + '/serving', String(process.pid));
for (let i = 0; ; i++) {
  await writeFile(dir + '/value.tmp', String(i));
  await sleep(40);
  await rename(dir + '/value.tmp', dir + '/value');
  await sleep(40);
}
`;

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

async function oneMemberCluster(
  t: { teardown(fn: () => Promise<void>): void },
  refuseRestart = false,
) {
  const dir = await mkdtemp(join(tmpdir(), 'durable-kill-faults-'));
  const entryPoint = join(dir, 'member.mjs');
  await writeFile(entryPoint, MEMBER);
  const member = await prepareMember({
    id: 'm1',
    dir,
    ports: [],
    entryPoint,
    config: { refuseRestart },
  });
  const data = join(dir, 'data');
  await mkdir(data);
  t.teardown(async () => {
    await member.process.kill();
    await rm(dir, { recursive: true, force: true });
  });
  const cluster: NemesisCluster = {
    members: [member],
    leader: async () => 'm1',
    // Serving once the process now running says so.
    waitReady: (id) =>
      eventually(
        async () => (await readFile(join(data, 'serving'), 'utf8')) === String(member.process.pid),
        `${id} to serve`,
        5_000,
      ),
    storeOutages: [],
  };
  const window: DurableWindow = {
    label: 'a value being replaced',
    directories: async () => [data],
    opens: (_dir, name) => name === 'value.tmp',
    inside: (at, name) => exists(join(at, name)),
  };
  const kills: AimedKills = { tally: {}, problems: [] };
  const [fault] = durableKillFaults(
    cluster,
    [{ kind: 'kill-in-put', windowOf: () => window }],
    undefined,
    kills,
  );
  return { member, fault, kills };
}

test('an aimed kill that lands is counted inside its window, and the member restarted', async (t) => {
  const { member, fault, kills } = await oneMemberCluster(t);
  member.process.start();
  const describe = await fault.apply('m1', 0, new AbortController().signal);
  t.regex(describe, /^kill -9 m1 inside a value being replaced; serving \d+ ms after the restart$/);
  t.deepEqual(kills.tally['kill-in-put'], { landed: 1, missed: 0, late: 0 });
  t.deepEqual(kills.problems, []);
  t.true(member.process.running);
});

test('a member that refuses to start after an aimed kill is a problem, with what it logged', async (t) => {
  const { member, fault, kills } = await oneMemberCluster(t, true);
  member.process.start();
  const describe = await fault.apply('m1', 0, new AbortController().signal);
  t.regex(describe, /did not serve again \(exited\)/);
  t.is(kills.tally['kill-in-put'].landed, 1);
  t.is(kills.problems.length, 1);
  t.regex(
    kills.problems[0],
    /m1 did not start again after a kill inside a value being replaced: it exited/,
  );
  t.regex(kills.problems[0], /refusing to start: data\/value is damaged/);
});
