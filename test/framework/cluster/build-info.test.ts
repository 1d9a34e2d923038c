import { readFile } from 'node:fs/promises';
import test from 'ava';
import { authorityClusterVariant } from '@baton/cli/internal/local-cluster/local-authority-cluster.js';
import { streamClusterVariant } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import type { ClusterStatus, MemberReport } from '@baton/cluster/internal/schemas.js';
import { eventually } from '../../hosts/eventually.js';
import { startNodeProcesses } from './node-processes.js';

const packageVersion = async () => (JSON.parse(await readFile(new URL('../../../../framework/http/package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** What `npm run build` recorded (framework/http/dist/build-info.json); a bare `tsc` build records nothing and members say unknown. */
async function expectedBuild(): Promise<string> {
  try {
    return (JSON.parse(await readFile(new URL('../../../../framework/http/dist/build-info.json', import.meta.url), 'utf8')) as { build: string }).build;
  } catch {
    return 'unknown';
  }
}

async function getJson<T>(url: string, token: string): Promise<T> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  return (await response.json()) as T;
}

/** The labels of the one baton_build_info series, which must be 1. */
async function buildInfoSeries(metricsUrl: string): Promise<Record<string, string>> {
  const text = await (await fetch(metricsUrl)).text();
  const lines = text.split('\n').filter((line) => line.startsWith('baton_build_info{'));
  if (lines.length !== 1) throw new Error(`expected one baton_build_info series at ${metricsUrl}, found ${lines.length}`);
  const match = /^baton_build_info\{(.*)\} (\S+)$/.exec(lines[0]);
  if (!match || match[2] !== '1') throw new Error(`baton_build_info is not 1: ${lines[0]}`);
  return Object.fromEntries([...match[1].matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

function checkVersions(t: import('ava').ExecutionContext, report: MemberReport, series: Record<string, string>, version: string, build: string) {
  t.is(report.version, version);
  t.is(report.build, build);
  t.is(report.nodeVersion, process.version);
  t.regex(report.build, /^([0-9a-f]{40}|unknown)$/);
  t.is(series.version, report.version, '/metrics and the member report name the same version');
  t.is(series.build, report.build);
  t.is(series.node_version, report.nodeVersion);
}

test.serial('stream nodes report their version and build in the member report, the cluster picture and baton_build_info', async (t) => {
  const [version, build] = [await packageVersion(), await expectedBuild()];
  const cluster = await startNodeProcesses(t, streamClusterVariant);
  const [n1] = cluster.nodes;
  let picture!: ClusterStatus;
  await eventually(async () => {
    picture = await getJson<ClusterStatus>(`${n1.url}/v1/admin/cluster`, cluster.token);
    return picture.members.every((m) => m.report !== null);
  }, 'every node to answer for its report', 60_000);
  for (const node of cluster.nodes) {
    const report = await getJson<MemberReport>(`${node.url}/v1/admin/cluster/member`, cluster.token);
    t.is(report.id, node.id);
    checkVersions(t, report, await buildInfoSeries(`${node.url}/metrics`), version, build);
    const seen = picture.members.find((m) => m.id === node.id)!.report!;
    t.deepEqual([seen.version, seen.build, seen.nodeVersion], [report.version, report.build, report.nodeVersion], `${n1.id} relays ${node.id}'s versions`);
  }
});

test.serial('authority members report their version and build on both listeners', async (t) => {
  const [version, build] = [await packageVersion(), await expectedBuild()];
  const cluster = await startNodeProcesses(t, authorityClusterVariant);
  const [east] = cluster.nodes;
  let picture!: ClusterStatus;
  await eventually(async () => {
    picture = await getJson<ClusterStatus>(`${east.url}/availability/v1/cluster`, cluster.token);
    return picture.members.every((m) => m.report !== null);
  }, 'every member to answer for its report', 60_000);
  for (const node of cluster.nodes) {
    const report = await getJson<MemberReport>(`${node.publicUrl}/availability/v1/cluster/member`, cluster.token);
    t.is(report.id, node.id);
    checkVersions(t, report, await buildInfoSeries(`${node.url}/metrics`), version, build);
    t.is(picture.members.find((m) => m.id === node.id)!.report!.build, report.build);
  }
});
