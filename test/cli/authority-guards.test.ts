import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { ADMIN, startNode } from '../hosts/authority-node/node-harness.js';
import { runBaton } from './run-baton.js';

const cwd = process.cwd();
const TRANSFER = ['--from', 'east', '--to', 'west', '--reason', 'drain east'];

test('authority transfer --if-epoch: a stale epoch is refused (exit 1, the 412 said, nothing moved); the current one commits', async (t) => {
  // A fresh working directory: whatever the node keeps under relative paths stays out of the checkout.
  const dir = await mkdtemp(join(tmpdir(), 'baton-cli-authority-guards-'));
  process.chdir(dir);
  t.teardown(async () => {
    process.chdir(cwd);
    await rm(dir, { recursive: true, force: true });
  });
  const n = await startNode();
  t.teardown(() => n.host.stop());
  const established = await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
  t.is(established.status, 200);
  const baton = (...args: string[]) => runBaton(['authority', ...args], { cwd, env: { BATON_URL: n.control, BATON_TOKEN: ADMIN } });

  const stale = await baton('transfer', 'proj', ...TRANSFER, '--if-epoch', '3');
  t.is(stale.code, ExitCode.Failed, stale.stderr);
  t.regex(stale.stderr, /proj lives in east at epoch 1, not at epoch 3 as expected: nothing moved/);
  t.like(n.consensus.view().state.authorities.get('proj'), { home: 'east', epoch: 1 });
  t.is((await baton('transfer', 'proj', ...TRANSFER, '--if-epoch', 'x')).code, ExitCode.Usage);

  n.probe.answer('west', 0);
  const moved = await baton('transfer', 'proj', ...TRANSFER, '--if-epoch', '1', '--key', 'guarded-move');
  t.is(moved.code, ExitCode.Ok, moved.stderr);
  t.regex(moved.stdout, /committed: proj moved from east to west at epoch 2/);
});
