import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanKind } from '@opentelemetry/api';
import test from 'ava';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import type { OwnershipConsensus } from '@baton/authority-transfer/internal/audit-projection.js';
import { AUTHORITY_NODE } from '@baton/authority-transfer/internal/plugins.js';
import type { AuthorityNode } from '@baton/authority-transfer/internal/authority-node.js';
import { TRACING } from '@baton/http/internal/tracing.js';
import { MemberTracing } from '@baton/http/internal/tracing-plugin.js';
import type { Host } from '@baton/kernel/internal/host.js';
import { authorityNodeHostBuilder } from '@baton/host-authority-node/internal/host.js';
import { call } from '../../hosts/authority-node/http-call.js';
import { loopbackMembers, waitForLeader } from '../../hosts/authority-node/loopback-members.js';
import { ADMIN, WRITER, transfer } from '../../hosts/authority-node/node-harness.js';
import { eventually } from '../../hosts/eventually.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN_ID = 'b7ad6b7169203331';
const memberOf = (span: ReadableSpan) => String(span.resource.attributes['service.instance.id']);

test('one trace follows a planned authority transfer from the member asked to the members its barrier probes', async (t) => {
  const members = await loopbackMembers(['east', 'west', 'north']);
  const { ids } = members;
  const roster = members.roster();
  const exporter = new InMemorySpanExporter();
  const hosts: Host[] = [];
  t.teardown(async () => {
    for (const host of hosts.reverse()) await host.stop();
  });
  const nodes: AuthorityNode[] = [];
  for (let i = 0; i < 3; i++) {
    const tracing = new MemberTracing(ids[i], { exporter });
    t.teardown(() => tracing.stop());
    const host = authorityNodeHostBuilder(members.raftHost(i, roster))
      .value(TRACING, tracing)
      .build();
    await host.start();
    hosts.push(host);
    nodes.push(host.get(AUTHORITY_NODE));
  }
  await waitForLeader(hosts.map((h) => h.get(METADATA_CONSENSUS) as OwnershipConsensus));
  const east = nodes[0];
  const established = await call(east.controlAddress.url, 'POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
  t.is(established.status, 200, JSON.stringify(established.body));
  const write = await call(east.publicAddress.url, 'POST', '/availability/v1/authorities/proj/writes', { token: WRITER, body: { operation: 'op1', epoch: 1 } });
  t.is(write.status, 200, JSON.stringify(write.body));
  await exporter.forceFlush();
  exporter.reset();

  const response = await fetch(`${east.controlAddress.url}/availability/v1/transfers`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${ADMIN}`,
      'content-type': 'application/json',
      'idempotency-key': 'traced-move',
      traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`,
    },
    body: JSON.stringify(transfer),
  });
  t.is(response.status, 200, await response.clone().text());
  let spans: ReadableSpan[] = [];
  const root = () => spans.find((s) => s.name === 'POST /availability/v1/transfers' && memberOf(s) === 'east-1');
  // Server spans on other members whose parent is a client span of this trace on east.
  const continued = () => {
    const eastClients = new Map(spans.filter((s) => memberOf(s) === 'east-1' && s.kind === SpanKind.CLIENT).map((s) => [s.spanContext().spanId, s]));
    return spans.filter((s) => s.kind === SpanKind.SERVER && memberOf(s) !== 'east-1' && eastClients.has(s.parentSpanContext?.spanId ?? ''));
  };
  await eventually(() => {
    spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === TRACE_ID);
    return root() !== undefined && continued().length > 0;
  }, 'the transfer request span and a member continuing it', 10_000);
  t.is(root()!.parentSpanContext?.spanId, CALLER_SPAN_ID, "the control request continues the caller's trace");
  t.is(root()!.attributes['baton.listener'], 'control');
  const others = new Set(continued().map(memberOf));
  t.true(others.size >= 1, `members continuing the trace: ${[...others].join(', ')}`);
  t.log(
    'spans of the trace:',
    spans.map((s) => `${memberOf(s)} ${s.name}`).sort(),
  );
  // The barrier probe reads the applied serial of east's feed from the members that replicate it.
  t.true(
    spans.some((s) => s.kind === SpanKind.SERVER && memberOf(s) !== 'east-1' && /^GET \/availability\/v1\/feeds\/\{origin\}\/applied$/.test(s.name)),
    'a probed member served the applied serial within the trace',
  );
});
