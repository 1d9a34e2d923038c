import test from 'ava';
import { PEER, READER, startNode } from '../hosts/authority-node/node-harness.js';

/** `baton_peer_refusals_total` of one /metrics text, by `listener route reason`. */
function refusals(metricsText: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of metricsText.split('\n')) {
    const match = /^baton_peer_refusals_total\{(.*)\} (\d+)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...match[1].matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    counts.set(`${labels.listener} ${labels.route} ${labels.reason}`, Number(match[2]));
  }
  return counts;
}

/** What each refusal added to the counter: only the keys that moved. */
function added(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const moved: Record<string, number> = {};
  for (const [key, count] of after) if (count !== (before.get(key) ?? 0)) moved[key] = count - (before.get(key) ?? 0);
  return moved;
}

const FEED = '/availability/v1/feed';
const APPLIED = '/availability/v1/feeds/{origin}/applied';

for (const insecure of [true, false]) {
  test(`the authority feed routes count their refusals in baton_peer_refusals_total ${insecure ? 'under insecure: true (the bearer scope peer)' : 'with member credentials'}, and not what they serve`, async (t) => {
    const node = await startNode({ insecure });
    t.teardown(() => node.host.stop());
    const metrics = async () => refusals(await (await fetch(`${node.control}/metrics`)).text());
    const onPublic = { base: node.publicUrl };
    const before = await metrics();

    t.is((await node.call('GET', `${FEED}?after=0`, onPublic)).status, 401, 'no credential at all');
    t.is((await node.call('GET', '/availability/v1/feeds/west-1/applied', onPublic)).status, 401, 'no credential at all');
    const reader = await node.call('GET', `${FEED}?after=0`, { ...onPublic, token: READER });
    // A reader's token is no peer credential: the scope it lacks (insecure), or no member (secure).
    t.is(reader.status, insecure ? 403 : 401);
    if (insecure) {
      t.is((await node.call('GET', `${FEED}?after=0`, { ...onPublic, token: PEER })).status, 200, 'a peer is served');
      t.is((await node.call('GET', `${FEED}?limit=0`, { ...onPublic, token: PEER })).status, 400, 'a peer with a bad query');
    }

    const unauthenticated = insecure ? 'unauthenticated' : 'peer-unauthenticated';
    t.deepEqual(added(before, await metrics()), {
      [`public ${FEED} ${unauthenticated}`]: insecure ? 1 : 2,
      [`public ${APPLIED} ${unauthenticated}`]: 1,
      ...(insecure ? { [`public ${FEED} insufficient-scope`]: 1, [`public ${FEED} invalid-input`]: 1 } : {}),
    });
  });
}
