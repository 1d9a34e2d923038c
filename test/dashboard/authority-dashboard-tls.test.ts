import test from 'ava';
import { authorityClusterVariant } from '@baton/cli/internal/local-cluster/local-authority-cluster.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { eventually } from '../hosts/eventually.js';
import { call } from '../support/https-call.js';
import { openBrowser } from './browser.js';

test('the authority dashboard over TLS polls only its own picture route: ten refreshes, no request for the stream route, no 404, no favicon', async (t) => {
  const cluster = await startNodeProcesses(t, authorityClusterVariant, { tls: true });
  const [east] = cluster.nodes;
  const caFile = east.caFile!;
  t.regex(east.url, /^https:/);
  await eventually(
    async () => (await Promise.all(cluster.nodes.map(async (n) => (await call(`${n.url}/readyz`, { caFile })).status === 200))).every(Boolean),
    'every member ready',
    60_000,
  );

  const { page, problems } = await openBrowser(t, { ignoreHTTPSErrors: true });
  const asked: string[] = [];
  page.on('request', (request) => asked.push(new URL(request.url()).pathname));
  await page.goto(`${east.url}/ui/`);
  await page.getByLabel('Admin token').fill(cluster.token);
  await page.keyboard.press('Enter');
  await page.getByTestId('members').locator('tbody tr').nth(2).waitFor();
  // The picture refreshes once a second: wait for ten of its answers.
  const pictures = () => asked.filter((path) => path === '/availability/v1/cluster').length;
  await eventually(async () => pictures() >= 11, 'ten refreshes of the picture after the login', 60_000);
  t.deepEqual(
    asked.filter((path) => path.startsWith('/v1/') || path === '/favicon.ico'),
    [],
    "no request for the stream variant's routes, nor for an icon",
  );
  t.deepEqual(problems.list, [], 'no script or console error, no failed request');
});
