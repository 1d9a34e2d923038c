import test from 'ava';
import { spawnBaton } from './run-baton.js';
import { closedPort } from './closed-port.js';

test('member, leader and snapshot commands refuse a bad command line with exit code 2 before any request', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  for (const args of [
    ['member', 'remove', 'not a member', '--url', url],
    ['leader', 'move', 'a/b', '--url', url],
    ['member', 'add', 'n4', '--url', url],
    ['member', 'list', '--url', url, '--variant', 'neither'],
    ['snapshot', 'restore', 'backup.ndjson'],
    ['snapshot', 'restore', 'backup.ndjson', '--data-dir', 'x', '--variant', 'neither'],
  ]) {
    const run = await spawnBaton(args);
    t.is(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    t.regex(run.stderr, /^baton: |error:/, args.join(' '));
  }
});

test('member list names the address it could not reach, exit code 3', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  const run = await spawnBaton(['member', 'list', '--url', url]);
  t.is(run.code, 3, run.stderr);
  t.true(run.stderr.includes(url), run.stderr);
});

test('snapshot restore of a file that is no backup fails with exit code 1 and says why', async (t) => {
  const run = await spawnBaton(['snapshot', 'restore', '/nonexistent/backup.ndjson', '--data-dir', '/nonexistent/dir', '--json']);
  t.is(run.code, 1, run.stderr);
  t.like(JSON.parse(run.stderr), { error: { code: 'unreadable_backup', exitCode: 1 } });
});
