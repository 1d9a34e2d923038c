import test from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { MemberProcess } from './member-process.js';

test('waiting on a member that exits fails at once with how it ended and what it logged', async (t) => {
  const dir = await makeTempDir('member-process');
  t.teardown(() => dir.remove());
  const entry = join(dir.path, 'exits.mjs');
  await writeFile(entry, "console.error('cannot listen: address in use'); process.exit(3);\n");
  const member = new MemberProcess('m1', entry, join(dir.path, 'config.json'), join(dir.path, 'member.log'));
  member.start();
  const never = new Promise<void>(() => undefined);
  const error = await t.throwsAsync(member.whileRunning(never));
  t.regex(error!.message, /member m1 is not running \(exited with code 3\)/);
  t.regex(error!.message, /cannot listen: address in use/);
});

test('waiting on a running member gives the work its answer', async (t) => {
  const dir = await makeTempDir('member-process');
  t.teardown(() => dir.remove());
  const entry = join(dir.path, 'stays.mjs');
  await writeFile(entry, 'setInterval(() => undefined, 1000);\n');
  const member = new MemberProcess('m1', entry, join(dir.path, 'config.json'), join(dir.path, 'member.log'));
  member.start();
  t.teardown(() => member.kill());
  t.is(await member.whileRunning(Promise.resolve(42)), 42);
});
