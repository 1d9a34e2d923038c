import test from 'ava';
import { streamClusterVariant } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { eventually } from '../hosts/eventually.js';
import { openBrowser, screenshot } from './browser.js';

declare const document: {
  querySelector(selector: string): { textContent: string | null } | null;
  querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }>;
};

test('the stream dashboard as members go: a confirmation names the owner as it is now, recent transfers by name outlive their reporter, a Dead node is offered a failover and no drain, and without a leader liveness reads as unknown since then', async (t) => {
  const cluster = await startNodeProcesses(t, streamClusterVariant);
  const [n1] = cluster.nodes;
  const admin = { authorization: `Bearer ${cluster.token}`, 'content-type': 'application/json' };
  const get = async <T>(path: string) => {
    const response = await fetch(`${n1.url}${path}`, { headers: admin });
    return { ok: response.ok, body: (response.ok ? await response.json() : undefined) as T };
  };
  await eventually(async () => (await get<{ nodes: unknown[] }>('/v1/admin/nodes')).body?.nodes.length === 3, 'three registered nodes', 60_000);
  const created = await fetch(`${n1.url}/v1/admin/streams`, { method: 'POST', headers: admin, body: JSON.stringify({ stream: 'orders', node: 'n2' }) });
  t.true(created.ok, 'create orders on n2');

  const { page, problems } = await openBrowser(t);
  await page.goto(`${n1.url}/ui/`);
  await page.getByLabel('Admin token').fill(cluster.token);
  await page.getByRole('button', { name: 'Open the dashboard' }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid=counts]')?.textContent === '3 nodes, 1 stream; 0 transfers in flight');
  await page.waitForFunction(() => document.querySelector('tr[data-stream=orders] [data-field=owner]')?.textContent === 'n2');

  // The listing goes stale (held at what it answered last), and orders moves behind it.
  let stale: unknown;
  await page.route('**/v1/admin/streams?*', async (route) => {
    stale ??= await (await route.fetch()).json();
    await route.fulfill({ json: stale });
  });
  const moved = await fetch(`${n1.url}/v1/admin/transfers`, { method: 'POST', headers: admin, body: JSON.stringify({ stream: 'orders', target: 'n3' }) });
  t.true(moved.ok, 'orders to n3 behind the page');
  await eventually(
    async () => (await get<{ status: string; owner?: string }>('/v1/admin/transfers/orders')).body?.owner === 'n3',
    'orders settled on n3',
    30_000,
  );
  t.is(await page.locator('tr[data-stream=orders] [data-field=owner]').textContent(), 'n2', 'the row is a poll behind');
  await page.getByLabel('Target node for orders').selectOption('n1');
  await page.locator('tr[data-stream=orders]').getByRole('button', { name: 'Transfer…' }).click();
  const dialog = page.getByRole('dialog');
  t.regex((await dialog.textContent())!, /n3 closes it at epoch 2; n1 opens it at the next epoch/, 'the question names the owner and epoch as they are now');
  await dialog.getByRole('button', { name: 'Transfer to n1' }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid=notice] [data-field=text]')?.textContent === 'transfer of orders to n1 accepted');
  await page.unroute('**/v1/admin/streams?*');
  await page.waitForFunction(() => document.querySelector('tr[data-stream=orders] [data-field=owner]')?.textContent === 'n1', undefined, { timeout: 30_000 });

  // Both handoffs, by name, each reported by its source.
  const recentMoves = () =>
    page.evaluate(() => Array.from(document.querySelectorAll('[data-testid=recent-transfers] tr[data-recent=orders] [data-field=move]'), (c) => c.textContent).sort());
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=recent-transfers] tr[data-recent=orders]').length === 2, undefined, { timeout: 30_000 });
  t.deepEqual(await recentMoves(), ['n2 → n3', 'n3 → n1']);
  // A success is said once, then goes.
  await page.locator('[data-testid=notice]').waitFor({ state: 'detached', timeout: 30_000 });

  // n2 goes down: what it reported still counts, and once it is Dead it is offered a failover, not a drain.
  await cluster.stop('n2');
  await page.waitForFunction(() => document.querySelector('tr[data-member=n2] [data-field=state]')?.textContent?.startsWith('down') === true, undefined, { timeout: 30_000 });
  await page.waitForFunction(() => /^2 settled, .*\(1 as last reported by members not answering\)$/.test(document.querySelector('[data-testid=plot-summary]')?.textContent ?? ''));
  t.deepEqual(await recentMoves(), ['n2 → n3', 'n3 → n1'], "n2's handoff stays listed");
  const n2 = page.locator('[data-node=n2]');
  await n2.getByRole('button', { name: 'Fail over n2' }).waitFor({ timeout: 30_000 });
  t.is(await n2.getByRole('button', { name: 'Drain n2' }).count(), 0, 'a Dead node cannot close its streams: no drain');
  t.deepEqual(await page.getByLabel('Target node for orders').locator('option').allTextContents(), ['n3'], 'a Dead node is no target');
  await n2.getByRole('button', { name: 'Fail over n2' }).click();
  t.regex((await page.getByRole('dialog').textContent())!, /n2 is Dead: its 0 streams open on the other nodes/);
  await page.getByRole('dialog').getByRole('button', { name: 'Fail over n2' }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid=notice] [data-field=text]')?.textContent === 'failing over n2');

  // n3 goes too: n1 is left without a quorum, so without a leader, and the verdicts it shows are old.
  // Its admin reads are refused meanwhile (503), which the page shows as errors.
  problems.tolerate(503, /^\/v1\/admin\/(nodes|rebalance|streams)/);
  await cluster.stop('n3');
  const unknown = page.getByTestId('liveness-unknown');
  await unknown.waitFor({ timeout: 60_000 });
  t.regex((await unknown.textContent())!, /^Liveness unknown since \d\d:\d\d:\d\d \(\d+ s\): n1 knows no leader, and liveness is the leader's verdict: each one shown is the last n1 applied\.$/);
  await page.waitForFunction(() => document.querySelector('[data-testid=leader]')?.textContent?.startsWith('no leader') === true, undefined, { timeout: 30_000 });
  await page.waitForFunction(() => document.querySelector('tr[data-member=n3] [data-field=state]')?.textContent?.startsWith('down (unknown, last ') === true);
  t.is(await page.locator('tr[data-member=n2] [data-field=state]').textContent(), 'down (unknown, last Dead)');
  t.regex((await page.locator('tr[data-member=n3] [data-field=state]').textContent())!, /^down \(unknown, last (Alive|Suspect)\)$/);
  t.regex((await page.locator('tr[data-member=n3] [data-field=state]').getAttribute('title'))!, /^liveness unknown since \d\d:\d\d:\d\d: no leader$/);
  t.true(await n2.getByRole('button', { name: 'Fail over n2' }).isDisabled(), 'no failover on a verdict that is not current');
  t.is(await page.locator('tr.leader').count(), 0, 'no row is the leader');
  await screenshot(page, 'dashboard-stream-members-lost');
  t.deepEqual(problems.list, [], 'no script or console error, no failed request beyond the refusals of a cluster without a quorum');
});
