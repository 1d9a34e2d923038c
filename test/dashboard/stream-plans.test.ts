import test from 'ava';
import { registeredStreamProcesses } from './stream-processes.js';
import { openBrowser } from './browser.js';

// The page's own globals, inside the functions Playwright runs there.
type PageElement = { textContent: string | null; getAttribute(name: string): string | null };
declare const document: { querySelector(selector: string): PageElement | null };

test("the stream dashboard shows a plan's preview (moves, streams per node before and after) and, once executed from the page, its progress to the end", async (t) => {
  const { cluster, n1, admin } = await registeredStreamProcesses(t);
  for (let i = 0; i < 6; i++) {
    const created = await fetch(`${n1.url}/v1/admin/streams`, { method: 'POST', headers: admin, body: JSON.stringify({ stream: `s${i}`, node: 'n1' }) });
    t.true(created.ok, `create s${i}`);
  }
  const planned = await fetch(`${n1.url}/v1/admin/plans`, { method: 'POST', headers: admin, body: JSON.stringify({ goal: 'rebalance', limits: { maxConcurrent: 2 } }) });
  t.is(planned.status, 201);
  const { id } = (await planned.json()) as { id: string };

  const { page, problems } = await openBrowser(t);
  await page.goto(`${n1.url}/ui/`);
  await page.getByLabel('Admin token').fill(cluster.token);
  await page.getByRole('button', { name: 'Open the dashboard' }).click();
  const detail = page.getByTestId('plan-detail');
  await detail.waitFor();
  t.is(await detail.getAttribute('data-plan'), id);
  t.is(await detail.getAttribute('data-status'), 'planned');
  const effect = page.getByTestId('plan-effect');
  t.is(await effect.locator('tr[data-node=n1] [data-field=before]').textContent(), '6');
  t.is(await effect.locator('tr[data-node=n1] [data-field=after]').textContent(), '2');
  t.is(await page.getByTestId('plan-moves').locator('li').count(), 4);
  t.regex((await page.getByTestId('plan-violations').textContent())!, /required labels 0 → 0/);

  await detail.getByRole('button', { name: 'Execute' }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid=plan-detail]')?.getAttribute('data-status') === 'completed', undefined, { timeout: 60_000 });
  t.is(await page.getByTestId('plan-progress').getAttribute('aria-valuenow'), '100');
  t.regex((await page.locator('[data-testid=plan-progress] + .bar-text').textContent())!, /^4 of 4 moved, 0 moving, 0 waiting$/);
  // The list polls on its own: it shows the end at its next answer.
  await page.waitForFunction((plan) => document.querySelector(`[data-testid=plans] tr[data-plan=${plan}] [data-field=status]`)?.textContent === 'completed', id, { timeout: 30_000 });
  const nodes = (await (await fetch(`${n1.url}/v1/admin/nodes`, { headers: admin })).json()) as { nodes: { owned: number }[] };
  t.deepEqual(nodes.nodes.map((n) => n.owned), [2, 2, 2]);
  t.deepEqual(problems.list, [], 'no script or console error, no failed request');
});
