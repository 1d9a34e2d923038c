import { readFile } from 'node:fs/promises';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import test from 'ava';
import { newAdminToken, type ClusterRecord } from '@baton/cli/internal/local-cluster/cluster-record.js';
import { freeLoopbackPorts } from '@baton/cli/internal/local-cluster/free-ports.js';
import { memberIdsOf, withPeerSecrets } from '@baton/cli/internal/local-cluster/peer-credentials.js';
import { streamClusterVariant } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import type { ClusterStatus } from '@baton/cluster/internal/schemas.js';
import { TRACING } from '@baton/http/internal/tracing.js';
import { MemberTracing } from '@baton/http/internal/tracing-plugin.js';
import type { Host } from '@baton/kernel/internal/host.js';
import { streamNodeHostBuilder } from '@baton/host-stream-node/internal/host.js';
import { workDir } from '../../cli/temp-project.js';
import { eventually } from '../../hosts/eventually.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';

const memberOf = (span: ReadableSpan) => String(span.resource.attributes['service.instance.id']);

test.serial('one trace follows a stream transfer asked of a follower: its admin request, the forwarded proposal and the leader that commits it', async (t) => {
  const dir = await workDir(t);
  const ports = await freeLoopbackPorts(streamClusterVariant.portKeys.length);
  const record: ClusterRecord = {
    variant: streamClusterVariant.variant,
    ports: Object.fromEntries(streamClusterVariant.portKeys.map((key, i) => [key, ports[i]])),
    token: newAdminToken(),
    peerToken: newAdminToken(),
    peerSecrets: withPeerSecrets(undefined, memberIdsOf(streamClusterVariant.portKeys)),
  };
  const nodes = await streamClusterVariant.writeConfigs(dir, record);
  // Three members in this process, each with its own tracer provider; one exporter sees them all.
  const exporter = new InMemorySpanExporter();
  const hosts: Host[] = [];
  t.teardown(async () => {
    for (const host of hosts.reverse()) await host.stop();
  });
  for (const node of nodes) {
    const config = JSON.parse(await readFile(node.file, 'utf8')) as Record<string, unknown>;
    config.log = { level: 'silent' };
    const tracing = new MemberTracing(node.id, { exporter });
    t.teardown(() => tracing.stop());
    const host = streamNodeHostBuilder(config).value(TRACING, tracing).build();
    await host.start();
    hosts.push(host);
  }
  const admin = async (base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${record.token}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, any>;
  };
  let picture!: ClusterStatus;
  await eventually(async () => {
    picture = (await admin(nodes[0].url, 'GET', '/v1/admin/cluster')) as ClusterStatus;
    return picture.leader !== null && picture.counts.nodes === 3 && picture.members.every((m) => m.report?.ready);
  }, 'a leader and three registered nodes', 60_000);
  const leader = picture.leader!;
  const follower = nodes.find((n) => n.id !== leader)!;
  const created = await admin(follower.url, 'POST', '/v1/admin/streams', { stream: 'traced' });
  const target = nodes.find((n) => n.id !== created.owner)!.id;
  await exporter.forceFlush();
  exporter.reset();

  // The caller's own trace: the member continues it.
  const answer = await admin(follower.url, 'POST', '/v1/admin/transfers', { stream: 'traced', target }, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01` });
  t.is(answer.target, target);
  let spans: ReadableSpan[] = [];
  const named = (name: string, member: string) => spans.find((s) => s.name === name && memberOf(s) === member);
  await eventually(() => {
    spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === TRACE_ID);
    return named('POST /v1/admin/transfers', follower.id) !== undefined && named('POST /internal/raft/v1/requests', leader) !== undefined;
  }, 'the follower\'s and the leader\'s server spans', 10_000);

  const server = named('POST /v1/admin/transfers', follower.id)!;
  t.is(server.parentSpanContext?.spanId, CALLER_SPAN_ID, 'the admin request continues the caller\'s trace');
  t.is(server.attributes['http.response.status_code'], 202);
  const forward = named('raft forward proposal', follower.id)!;
  t.truthy(forward, 'the driver\'s forwarding is a span of the request');
  t.is(forward.attributes['baton.leader'], leader);
  t.is(forward.parentSpanContext?.spanId, server.spanContext().spanId);
  const call = named('raft raft-propose', follower.id)!;
  t.truthy(call, 'the peer call to the leader is a client span');
  t.is(call.parentSpanContext?.spanId, forward.spanContext().spanId);
  const onLeader = named('POST /internal/raft/v1/requests', leader)!;
  t.is(onLeader.parentSpanContext?.spanId, call.spanContext().spanId, 'the leader continues the trace from the traceparent the follower sent');
  t.is(onLeader.attributes['baton.member'], leader);
  t.deepEqual([...new Set(spans.map(memberOf))].sort(), [follower.id, leader].sort(), 'one trace across two members');
  // Raft's own traffic and probes make no spans.
  t.false(exporter.getFinishedSpans().some((s) => /\/internal\/raft\/v1\/(stream|messages)|readyz|metrics/.test(s.name)));
});
