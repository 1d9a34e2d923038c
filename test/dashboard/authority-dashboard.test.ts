import test from 'ava';
import { authorityClusterVariant } from '@baton/cli/internal/local-cluster/local-authority-cluster.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { eventually } from '../hosts/eventually.js';
import { openBrowser, screenshot } from './browser.js';

declare const document: { querySelector(selector: string): { textContent: string | null } | null };

test('the authority dashboard: members and leader; a planned transfer with a reason commits and its sealed audit shows', async (t) => {
  const cluster = await startNodeProcesses(t, authorityClusterVariant);
  const [east] = cluster.nodes;
  await eventually(async () => (await Promise.all(cluster.nodes.map(async (n) => (await fetch(`${n.url}/readyz`)).ok))).every(Boolean), 'every member ready', 60_000);
  // Give proj a first home in east, as `baton up` does.
  await eventually(async () => {
    const placed = await fetch(`${east.url}/availability/v1/commands`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cluster.token}`, 'content-type': 'application/json', 'idempotency-key': 'place-proj' },
      body: JSON.stringify({ type: 'transfer_authority', authority: 'proj', target: 'east' }),
    });
    return placed.ok;
  }, 'proj placed in east', 30_000);

  const { page, problems } = await openBrowser(t);
  await page.goto(`${east.url}/ui`);
  t.true(page.url().endsWith('/ui/'), '/ui redirects to /ui/');
  await page.getByLabel('Admin token').fill(cluster.token);
  await page.keyboard.press('Enter');
  const members = page.getByTestId('members');
  await members.locator('tbody tr').nth(2).waitFor();
  t.deepEqual(await members.locator('tbody th').allTextContents(), ['east-1', 'north-1', 'west-1']);
  await page.waitForFunction(() => /^leader \S+-1, term \d+$/.test(document.querySelector('[data-testid=leader]')?.textContent ?? ''));
  t.is(await members.locator('[data-field=state]:text-is("up (Alive)")').count(), 3);
  const leader = /^leader (\S+),/.exec((await page.getByTestId('leader').textContent())!)![1];
  t.deepEqual(await members.locator('tr.leader th').allTextContents(), [leader], "the leader's row, and only it, stands out");
  await page.waitForFunction(() => document.querySelector('[data-testid=counts]')?.textContent === '1 authority; 0 transfers in flight');

  // Every authority, listed a page at a time: proj in east at epoch 1.
  const listed = page.getByTestId('authority-list').locator('tr[data-listed=proj]');
  await listed.waitFor();
  t.deepEqual(await listed.locator('td').allTextContents(), ['east', '1', ''], 'a failover leaves nothing to catch up on');

  await page.getByLabel('Authority', { exact: true }).fill('proj');
  await page.getByLabel('From').selectOption('east');
  await page.getByLabel('To', { exact: true }).selectOption('west');
  await page.getByLabel('Reason').fill('drain east');
  await page.getByRole('button', { name: 'Transfer…' }).click();
  const dialog = page.getByRole('dialog');
  t.regex((await dialog.textContent())!, /Move proj from east to west\?.*“drain east”/);
  await dialog.getByRole('button', { name: 'Start the transfer' }).click();
  await page.waitForFunction(
    () => document.querySelector('[data-testid=notice] [data-field=text]')?.textContent === 'committed: proj moved from east to west at epoch 2',
    undefined,
    { timeout: 60_000 },
  );
  await page.waitForFunction(() => document.querySelector('[data-authority=proj] [data-field=home]')?.textContent === 'home west, epoch 2');
  const audit = page.getByTestId('audit-proj');
  await audit.waitFor();
  const row = (await audit.locator('tbody tr').first().locator('td').allTextContents()).slice(0, 4);
  t.deepEqual(row, ['east → west', '2', 'operator', 'drain east']);
  // The listing follows the move on its next poll.
  await page.waitForFunction(() => document.querySelector('[data-testid=authority-list] tr[data-listed=proj] [data-field=home]')?.textContent === 'west', undefined, { timeout: 30_000 });
  t.deepEqual(await listed.locator('td').allTextContents(), ['west', '2', ''], 'no write to carry: nothing to catch up on');

  // A home still catching up says which member, the final and what is held: the listing as a
  // member answers it for such a home (reproducing one takes a disk lost mid-transfer).
  await page.route('**/availability/v1/authorities?*', async (route) => {
    const answer = await route.fetch();
    const body = (await answer.json()) as { authorities: Record<string, unknown>[] };
    body.authorities.push({
      authority: 'quiet',
      home: 'north',
      epoch: 3,
      catch_up: { waiting_on: ['north-1'], settled: [], finals: [{ source: 'east-1', incarnation: 'i1', final: 5, held: 3 }], held_at: 'east-1' },
    });
    await route.fulfill({ response: answer, json: body });
  });
  const catchingUp = page.getByTestId('authority-list').locator('tr[data-listed=quiet]');
  await catchingUp.waitFor({ timeout: 30_000 }); // the listing's next poll
  t.deepEqual(await catchingUp.locator('td').allTextContents(), ['north', '3', 'north-1 (east-1: final 5, 3 held at east-1)']);
  await screenshot(page, 'dashboard-authority');
  t.deepEqual(problems.list, [], 'no script or console error, no failed request: the page asks only its own variant\'s routes, and for no icon');
});
