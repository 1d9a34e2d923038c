import { stat } from 'node:fs/promises';
import test from 'ava';
import { registeredStreamProcesses } from './stream-processes.js';
import { openBrowser, screenshot } from './browser.js';

// The page's own globals, inside the functions Playwright runs there.
type PageElement = { textContent: string | null; getAttribute(name: string): string | null };
declare const document: { querySelector(selector: string): PageElement | null; querySelectorAll(selector: string): ArrayLike<PageElement> };
declare const sessionStorage: { length: number; getItem(key: string): string | null };
declare const location: { href: string };

test('the stream dashboard: a wrong token is refused in words; the right one shows the members and leader; a transfer lands; a drain reaches 100%; the audit trail shows both, by kind, and a bad filter in words', async (t) => {
  const { cluster, n1, admin } = await registeredStreamProcesses(t);
  for (const stream of ['orders', 'payments']) {
    const created = await fetch(`${n1.url}/v1/admin/streams`, { method: 'POST', headers: admin, body: JSON.stringify({ stream, node: 'n2' }) });
    t.true(created.ok, `create ${stream}`);
  }

  const { page, problems } = await openBrowser(t);
  const response = await page.goto(`${n1.url}/ui/`);
  t.is(response?.headers()['content-type'], 'text/html; charset=utf-8');
  problems.expect({ status: 401, path: '/v1/admin/cluster' }); // the wrong token, refused
  await page.getByLabel('Admin token').fill('not-the-token');
  await page.getByRole('button', { name: 'Open the dashboard' }).click();
  const refusal = page.getByTestId('login-error');
  await refusal.waitFor();
  t.regex((await refusal.textContent())!, /refused this token: the bearer token is not recognised/);
  t.is(await page.evaluate(() => sessionStorage.length), 0, 'a refused token is not kept');

  await page.getByLabel('Admin token').fill(cluster.token);
  await page.getByRole('button', { name: 'Open the dashboard' }).click();
  const members = page.getByTestId('members');
  await members.locator('tbody tr').nth(2).waitFor();
  t.deepEqual(await members.locator('tbody th').allTextContents(), ['n1', 'n2', 'n3']);
  await page.waitForFunction(() => /^leader n\d, term \d+$/.test(document.querySelector('[data-testid=leader]')?.textContent ?? ''));
  const leader = /^leader (n\d)/.exec((await page.getByTestId('leader').textContent())!)![1];
  t.is(await members.locator(`tr[data-member=${leader}] [data-field=role]`).textContent(), 'leader');
  t.is(await members.locator('[data-field=role]:text-is("follower")').count(), 2);
  t.deepEqual(await members.locator('tr.leader th').allTextContents(), [leader], "the leader's row, and only it, stands out");
  t.is(await members.locator('thead th').nth(7).textContent(), 'Loop delay p99 / max (10 s)', 'the delay says which figures of which window');
  t.regex((await members.locator(`tr[data-member=${leader}] [data-field=loop-delay]`).textContent())!, /^\d+\.\d \/ \d+\.\d ms$/);
  t.is(await page.getByTestId('counts').textContent(), '3 nodes, 2 streams; 0 transfers in flight');
  t.true(await page.evaluate(() => !location.href.includes('token') && sessionStorage.getItem('baton.dashboard.token') !== null), 'the token is in sessionStorage, not the URL');

  // Transfer orders from n2 to n3 and watch its row land on n3 at the next epoch.
  await page.getByLabel('Find a stream').fill('orders');
  await page.getByRole('button', { name: 'Look up' }).click();
  const orders = page.locator('[data-testid=streams] tr[data-stream=orders]');
  await page.waitForFunction(() => document.querySelector('tr[data-stream=orders] [data-field=owner]')?.textContent === 'n2');
  await page.getByLabel('Target node for orders').selectOption('n3');
  await orders.getByRole('button', { name: 'Transfer…' }).click();
  const dialog = page.getByRole('dialog');
  t.regex((await dialog.textContent())!, /Transfer orders to n3\?/);
  await dialog.getByRole('button', { name: 'Transfer to n3' }).click();
  await page.waitForFunction(
    () =>
      document.querySelector('tr[data-stream=orders] [data-field=owner]')?.textContent === 'n3' &&
      document.querySelector('tr[data-stream=orders] [data-field=state]')?.textContent === 'open',
    undefined,
    { timeout: 30_000 },
  );
  t.is(await orders.locator('[data-field=epoch]').textContent(), '2');

  // Drain n3 (it owns orders now): its drain bar fills to 100%.
  await page.getByRole('button', { name: 'Drain n3' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Drain n3' }).click();
  const drainBar = page.getByTestId('drain-n3');
  await drainBar.waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=drain-n3]')?.getAttribute('aria-valuenow') === '100', undefined, { timeout: 30_000 });
  await page.waitForFunction(() => document.querySelector('tr[data-stream=orders] [data-field=owner]')?.textContent !== 'n3');
  t.regex((await page.locator('[data-node=n3]').textContent())!, /drained: 100%/);
  // The settled handoffs show in the plot of recent transfer durations.
  await page.waitForFunction(() => /[1-9]\d* settled/.test(document.querySelector('[data-testid=plot-summary]')?.textContent ?? ''), undefined, { timeout: 30_000 });

  // The summary line and the transfers panel read the same answer: a transfer held in flight
  // (the picture as a member answers it while one is, since a real handoff takes milliseconds).
  await page.route('**/v1/admin/cluster', async (route) => {
    const answer = await route.fetch();
    const body = (await answer.json()) as { transfersInFlight: { count: number; shown: unknown[] } };
    body.transfersInFlight = { count: 1, shown: [{ stream: 'held', source: 'n1', target: 'n2', epoch: 4, reason: 'admin', since: 0 }] };
    await route.fulfill({ response: answer, json: body });
  });
  await page.waitForFunction(() => document.querySelector('[data-testid=counts]')?.textContent === '3 nodes, 2 streams; 1 transfer in flight');
  t.is(await page.getByTestId('transfers-count').textContent(), '1', 'the panel counts what the summary counts');
  t.deepEqual(await page.locator('[data-testid=transfers] tbody th').allTextContents(), ['held']);
  await page.unroute('**/v1/admin/cluster');

  // The audit trail: the transfer and the drain, sealed with who ordered them, filtered by kind.
  const audit = page.getByTestId('audit');
  await page.waitForFunction(() => document.querySelector('[data-testid=audit] tr[data-kind=transfer_completed][data-subject=orders]') !== null, undefined, { timeout: 30_000 });
  // Newest first: the drain's move of orders off n3, then the transfer onto it.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=audit] tr[data-kind=transfer_completed][data-subject=orders]').length >= 2, undefined, { timeout: 30_000 });
  t.deepEqual((await audit.locator('tr[data-kind=transfer_completed][data-subject=orders] [data-field=change]').allTextContents()).slice(-2), [`n3 → ${await orders.locator('[data-field=owner]').textContent()}`, 'n2 → n3']);
  await page.getByLabel('Kind').selectOption('node_drain');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForFunction(() => {
    const kinds = Array.from(document.querySelectorAll('[data-testid=audit] tbody tr'), (row) => row.getAttribute('data-kind'));
    return kinds.length > 0 && kinds.every((kind) => kind === 'node_drain');
  });
  t.is(await audit.locator('tr[data-subject=n3] [data-field=actor]').first().textContent(), 'operator');
  // A subject the cluster does not know is refused (400), and the page says so in the server's words.
  problems.tolerate(400, /^\/v1\/admin\/audit\?.*subject=no-such-stream/);
  await page.getByLabel('Subject').fill('no-such-stream');
  await page.getByRole('button', { name: 'Filter' }).click();
  const refused = page.getByTestId('audit-error');
  await refused.waitFor();
  t.regex((await refused.textContent())!, /400: subject no-such-stream is no stream or node of this cluster/);
  t.is(await page.getByTestId('audit').count(), 0, "the refused filter shows none of the last filter's records");

  const shot = await screenshot(page, 'dashboard-stream');
  t.true((await stat(shot)).size > 10_000);
  t.deepEqual(problems.list, [], 'no script or console error, no failed request');
});
