import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { loadDashboardAssets } from '@baton/dashboard/internal/dashboard-assets.js';
import { dashboardRouter } from '@baton/dashboard/internal/dashboard-router.js';
import { ApiDocument } from '@baton/http/internal/openapi.js';
import { startApi } from '../http/harness.js';

const document = () => new ApiDocument({ title: 'dashboard test', version: '1' });

test('the built page is served from memory with its media type, a strict content policy and no caching of stale builds', async (t) => {
  const api = await startApi(dashboardRouter(document(), { clusterPath: '/v1/admin/cluster' }));
  t.teardown(() => api.stop());
  for (const [path, type] of [
    ['/ui/', 'text/html; charset=utf-8'],
    ['/ui/app.js', 'text/javascript; charset=utf-8'],
    ['/ui/app.css', 'text/css; charset=utf-8'],
  ]) {
    const response = await fetch(`${api.url}${path}`);
    t.is(response.status, 200, path);
    t.is(response.headers.get('content-type'), type, path);
    t.is(response.headers.get('x-content-type-options'), 'nosniff');
    t.is(response.headers.get('cache-control'), 'no-cache');
    t.regex(response.headers.get('content-security-policy')!, /default-src 'none'; script-src 'self';.*connect-src 'self'.*frame-ancestors 'none'/);
    t.true((await response.arrayBuffer()).byteLength > 100);
  }
  const html = await (await fetch(`${api.url}/ui/`)).text();
  t.regex(html, /<script type="module" src="\.\/app\.js"><\/script>/);
  t.notRegex(html, /https?:\/\//, 'the page loads nothing from elsewhere');
  t.regex(html, /<meta name="baton-cluster-path" content="\/v1\/admin\/cluster" \/>/, "the page is told its variant's picture route");
  t.regex(html, /<link rel="icon" href="data:," \/>/, 'no icon is declared, so no browser asks for /favicon.ico');
  const redirect = await fetch(`${api.url}/ui`, { redirect: 'manual' });
  t.is(redirect.status, 308);
  t.is(redirect.headers.get('location'), '/ui/');
});

test('a file the page does not have is a 404 problem, and no path reaches the disk', async (t) => {
  const api = await startApi(dashboardRouter(document(), { clusterPath: '/v1/admin/cluster' }));
  t.teardown(() => api.stop());
  for (const path of ['/ui/secret.txt', '/ui/..%2Fpackage.json', '/ui/index.html%00.js']) {
    const response = await fetch(`${api.url}${path}`);
    t.is(response.status, 404, path);
    t.is(response.headers.get('content-type'), 'application/problem+json', path);
  }
});

test('an installation whose bundle was not built says so with a 503 problem instead of a blank page', async (t) => {
  const empty = await mkdtemp(join(tmpdir(), 'baton-ui-'));
  t.teardown(() => rm(empty, { recursive: true, force: true }));
  t.is(loadDashboardAssets(`${empty}/`), undefined);
  const api = await startApi(dashboardRouter(document(), { clusterPath: '/v1/admin/cluster', load: () => loadDashboardAssets(`${empty}/`) }));
  t.teardown(() => api.stop());
  const response = await fetch(`${api.url}/ui/`);
  t.is(response.status, 503);
  t.regex(((await response.json()) as { detail: string }).detail, /run "npm run build"/);
});
