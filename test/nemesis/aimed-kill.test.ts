import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { eventually } from '../hosts/eventually.js';
import { killInside, type DurableWindow } from './aimed-kill.js';
import { prepareMember } from './cluster.js';

/**
 * A stand-in for a store: writes `value.tmp`, holds it a while (the window), renames it over
 * `value`, rests, and again, forever.
 */
const WRITER = `
import { rename, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
const dir = process.argv[2].replace(/config\\.json$/, 'data');
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

async function writerMember(t: { teardown(fn: () => Promise<void>): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'aimed-kill-'));
  const entryPoint = join(dir, 'writer.mjs');
  await writeFile(entryPoint, WRITER);
  const member = await prepareMember({ id: 'w', dir, ports: [], entryPoint, config: {} });
  const data = join(dir, 'data');
  await mkdir(data);
  t.teardown(async () => {
    await member.process.kill();
    await rm(dir, { recursive: true, force: true });
  });
  const window: DurableWindow = {
    label: 'a value being replaced',
    directories: async () => [data],
    opens: (_dir, name) => name === 'value.tmp',
    inside: (at, name) => exists(join(at, name)),
  };
  return { member, data, window };
}

test('a kill aimed at a window lands inside it: the process dies with its temp file still there', async (t) => {
  const { member, data, window } = await writerMember(t);
  member.process.start();
  await eventually(() => exists(join(data, 'value')), 'the writer to replace its value once');
  const outcome = await killInside([{ member, window }], 10_000, new AbortController().signal);
  t.is(outcome.killed, 'w');
  t.false(member.process.running);
  // Nothing runs any more to rename it: the kill came between the write and the rename.
  t.true(await exists(join(data, 'value.tmp')));
});

test('a window that never opens kills nothing and leaves the process running', async (t) => {
  const { member, data, window } = await writerMember(t);
  member.process.start();
  await eventually(() => exists(join(data, 'value')), 'the writer to replace its value once');
  const never: DurableWindow = { ...window, opens: (_dir, name) => name === 'other.tmp' };
  const outcome = await killInside([{ member, window: never }], 500, new AbortController().signal);
  t.is(outcome.killed, undefined);
  t.true(member.process.running);
  t.false(member.process.isPaused);
});

test('a member found past the window when stopped is resumed, not killed', async (t) => {
  const { member, data, window } = await writerMember(t);
  member.process.start();
  await eventually(() => exists(join(data, 'value')), 'the writer to replace its value once');
  // Never inside: every stop is found late, and the member runs on after each.
  const late: DurableWindow = { ...window, inside: async () => false };
  const outcome = await killInside([{ member, window: late }], 1_000, new AbortController().signal);
  t.is(outcome.killed, undefined);
  t.true(outcome.late > 0);
  t.true(member.process.running);
  t.false(member.process.isPaused);
});
