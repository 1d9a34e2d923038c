import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { streamClusterVariant } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { freeLoopbackPort, LOOPBACK, ServerProcess } from '@baton/conformance/internal/servers/server-process.js';
import { startNodeProcesses } from '../../framework/cluster/node-processes.js';
import { eventually } from '../../hosts/eventually.js';
import { PROMETHEUS, rulesWithShortFor } from './observability-files.js';

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

async function api<T>(base: string, path: string): Promise<T> {
  const response = await fetch(`${base}${path}`);
  const body = (await response.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`${path}: ${body.error ?? response.status}`);
  return body.data;
}

test.serial("Debian's Prometheus with the shipped rules fires BatonNodeDown for a stopped stream node, and only for it", async (t) => {
  const cluster = await startNodeProcesses(t, streamClusterVariant);
  const targets = cluster.nodes.map((node) => new URL(node.url).host);
  const dir = await mkdtemp(join(tmpdir(), 'baton-prometheus-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'baton-alerts.yml'), await rulesWithShortFor(2));
  // /metrics needs no token, so the scrape config carries no credential.
  await writeFile(
    join(dir, 'prometheus.yml'),
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 900ms',
      '  evaluation_interval: 1s',
      'rule_files:',
      '  - baton-alerts.yml',
      'scrape_configs:',
      '  - job_name: baton-streams',
      '    static_configs:',
      `      - targets: [${targets.map((target) => `'${target}'`).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const port = await freeLoopbackPort();
  const base = `http://${LOOPBACK}:${port}`;
  const prometheus = new ServerProcess(
    PROMETHEUS,
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=${LOOPBACK}:${port}`],
    new SystemClock(),
  );
  t.teardown(() => prometheus.stop());
  const started = await prometheus.waitForOutput(/Server is ready to receive web requests/, 20_000);
  t.is(started, 'ready', prometheus.spawnError?.message ?? prometheus.output);

  await eventually(async () => {
    const { activeTargets } = await api<{ activeTargets: { health: string }[] }>(base, '/api/v1/targets');
    return activeTargets.length === 3 && activeTargets.every((target) => target.health === 'up');
  }, 'Prometheus to scrape the three nodes', 30_000);
  await eventually(async () => (await api<{ result: unknown[] }>(base, '/api/v1/query?query=baton_build_info')).result.length === 3, 'baton_build_info of every node', 10_000);
  const before = await api<{ alerts: Alert[] }>(base, '/api/v1/alerts');
  t.deepEqual(before.alerts.filter((alert) => alert.labels.alertname === 'BatonNodeDown'), [], 'no node is down before the stop');

  const stopped = cluster.nodes[2];
  await cluster.stop(stopped.id);
  let firing: Alert[] = [];
  await eventually(async () => {
    firing = (await api<{ alerts: Alert[] }>(base, '/api/v1/alerts')).alerts.filter((a) => a.labels.alertname === 'BatonNodeDown' && a.state === 'firing');
    return firing.length > 0;
  }, 'BatonNodeDown to fire', 30_000);
  t.deepEqual(firing.map((alert) => [alert.labels.instance, alert.labels.job, alert.labels.severity]), [[new URL(stopped.url).host, 'baton-streams', 'critical']]);
});
