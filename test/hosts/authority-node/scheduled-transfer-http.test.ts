import test from 'ava';
import { ADMIN, startNode, transfer, waitFor } from './node-harness.js';

// POST /availability/v1/transfers with not_before ahead: 202 with the registered transfer's
// status at once (held to the published document), shown and cancellable until it starts.

type Node = Awaited<ReturnType<typeof startNode>>;

async function withProj(fn: (node: Node) => Promise<void>) {
  const node = await startNode();
  try {
    const established = await node.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
    if (established.status !== 200) throw new Error(`establish answered ${established.status}`);
    await fn(node);
  } finally {
    await node.host.stop();
  }
}

test('a transfer scheduled an hour ahead answers 202 with its status, shows its schedule, and is cancelled with 204 before it starts', (t) =>
  withProj(async (n) => {
    const notBefore = new Date(Date.now() + 3600_000).toISOString(); // clock-ok: the node runs on the system clock
    const notAfter = new Date(Date.now() + 7200_000).toISOString(); // clock-ok: as above
    const scheduled = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'tonight', body: { ...transfer, not_before: notBefore, not_after: notAfter } });
    t.is(scheduled.status, 202, JSON.stringify(scheduled.body));
    t.like(scheduled.body, { id: 'tonight', authority: 'proj', state: 'AwaitingCatchUp', frozen: false, not_before: notBefore, not_after: notAfter });
    t.is(scheduled.headers.get('idempotency-key'), 'tonight');
    t.like((await n.call('GET', '/availability/v1/transfers/proj', { token: ADMIN })).body, { id: 'tonight', not_before: notBefore });
    // The same key again answers the same way; another key meets the scheduled one (409).
    t.is((await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'tonight', body: { ...transfer, not_before: notBefore, not_after: notAfter } })).status, 202);
    const other = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'now', body: transfer });
    t.is(other.status, 409, JSON.stringify(other.body));
    t.is((await n.call('DELETE', '/availability/v1/transfers/proj', { token: ADMIN })).status, 204);
    await waitFor(() => !n.consensus.view().state.transfers.has('proj'), 'the scheduled registration to be released');
    t.is(await n.audit.byId('tonight'), undefined, 'nothing was sealed');
  }));

test('a schedule that is not a time, has passed, or ends before it starts answers 400 naming the field', (t) =>
  withProj(async (n) => {
    const ahead = (ms: number) => new Date(Date.now() + ms).toISOString(); // clock-ok: the node runs on the system clock
    for (const [body, field, why] of [
      [{ not_before: 'tonight' }, 'not_before', /./],
      [{ not_after: ahead(-60_000) }, undefined, /not_after has passed/],
      [{ not_before: ahead(3600_000), not_after: ahead(1800_000) }, undefined, /not_after must be later than not_before/],
    ] as const) {
      const res = await n.call('POST', '/availability/v1/transfers', { token: ADMIN, body: { ...transfer, ...body } });
      t.is(res.status, 400, JSON.stringify(res.body));
      if (field) t.true(JSON.stringify(res.body).includes(field), JSON.stringify(res.body));
      t.regex(String(res.body.detail), why);
    }
    t.false(n.consensus.view().state.transfers.has('proj'));
  }));
