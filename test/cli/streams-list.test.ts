import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { runBaton } from './run-baton.js';
import { startStreamCluster } from './stream-cluster.js';

const cwd = process.cwd();

test('streams list shows a page as a table with the command for the next page; --json gives the page document', async (t) => {
  const cluster = await startStreamCluster(t, ['n1']);
  const baton = (...args: string[]) => runBaton(args, { cwd, env: cluster.env });
  for (const name of ['beta', 'alpha', 'constructor']) t.is((await baton('streams', 'create', name, '--owner', 'n1')).code, ExitCode.Ok);
  const first = await baton('streams', 'list', '--limit', '2');
  t.is(first.code, ExitCode.Ok, first.stderr);
  const lines = first.stdout.trimEnd().split('\n');
  t.regex(lines[0], /^STREAM\s+OWNER\s+EPOCH\s+STATE\s+TAIL\s+TRANSFER$/);
  t.regex(lines[1], /^alpha\s+n1\s+1\s+open\s+0\s+-$/);
  t.regex(lines[2], /^beta\s+n1\s+1\s+open\s+0\s+-$/);
  t.is(lines[3], '2 shown of 3 stream(s); next page: baton streams list --limit 2 --after beta');
  const rest = await baton('streams', 'list', '--limit', '2', '--after', 'beta', '--json');
  t.is(rest.code, ExitCode.Ok, rest.stderr);
  const page = JSON.parse(rest.stdout);
  t.deepEqual(page.streams.map((s: { stream: string }) => s.stream), ['constructor']);
  t.is(page.next, null);
  t.is(page.total, 3);
  const bad = await baton('streams', 'list', '--limit', '0');
  t.is(bad.code, ExitCode.Usage);
});
