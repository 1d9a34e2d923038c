import { PROBLEM_TYPE_PREFIX } from '@baton/http';

// Example bodies of a stream node's API, as a two-node cluster (n1, n2) answers them, for its
// OpenAPI document. The document's lint checks each one against its schema.

const pending = { stream: 'orders', source: 'n1', target: 'n2', epoch: 1, reason: 'admin', since: 17 } as const;
const node = {
  id: 'n1',
  address: 'http://127.0.0.1:7400',
  slots: 1000,
  draining: false,
  owned: 12,
  incoming: 0,
  outgoing: 1,
  drained: false,
  liveness: 'Alive',
  lastRenewalMsAgo: 180,
  labels: { zone: 'z1' },
  maintenance: null,
  returning: false,
} as const;
const progress = { ...node, drainInFlight: 4, remaining: 12 };
const preview = {
  planned: 1,
  moves: [{ stream: 'orders', target: 'n2', source: 'n1' }],
  truncated: false,
  byNode: [
    { node: 'n1', out: 1, in: 0 },
    { node: 'n2', out: 0, in: 1 },
  ],
};
const rebalance = { planned: 1, started: 1, skipped: 0, maxInFlight: 4, waiting: 0, queue: [], next: null };

export const streamExamples = {
  append: { records: [{ body: 'first record' }, { body: 'second record' }], producer: { id: 'checkout', seq: 7 } },
  appended: { stream: 'orders', epoch: 2, first: 40, count: 2, offsets: [40, 41], duplicate: false, node: 'n2' },
  read: { stream: 'orders', from: 40, records: [{ offset: 40, body: 'first record' }, { offset: 41, body: 'second record' }], next: 42 },
  described: { stream: 'orders', owner: 'n1', address: 'http://127.0.0.1:7400', epoch: 1, state: 'open', tail: 40, transfer: pending },
  ownership: {
    stream: 'orders',
    owner: 'n1',
    address: 'http://127.0.0.1:7400',
    epoch: 1,
    state: 'open',
    pending_target: 'n2',
    pending_target_address: 'http://127.0.0.1:7410',
  },
  notOwner: {
    type: `${PROBLEM_TYPE_PREFIX}not-owner`,
    title: 'Conflict',
    status: 409,
    detail: 'stream orders is moving to node n2 (epoch 2): send the request to http://127.0.0.1:7410',
    instance: '/v1/streams/orders/records',
    stream: 'orders',
    owner: 'n2',
    address: 'http://127.0.0.1:7410',
    epoch: 2,
    transferring: true,
  },
  register: { id: 'n3', address: 'http://127.0.0.1:7420', slots: 1000 },
  registered: { node: { ...node, id: 'n3', address: 'http://127.0.0.1:7420', owned: 0, outgoing: 0 }, duplicate: false },
  nodes: { nodes: [node], next: null },
  node: progress,
  drain: { maxInFlight: 4 },
  draining: { ...progress, draining: true },
  undrained: progress,
  failover: { force: false },
  failedOver: { ...progress, liveness: 'Dead', owned: 0, remaining: 0, moved: 12, unplaceable: [], duplicate: false },
  create: { stream: 'orders', node: 'n1' },
  maintenance: { start: '2026-12-03T22:00:00Z', duration: '2h', movesPerSecond: 5 },
  inMaintenance: {
    node: { ...node, maintenance: { start: '2026-12-03T22:00:00.000Z', end: '2026-12-04T00:00:00.000Z', movesPerSecond: 5, active: false } },
  },
  setPlacement: { placement: { require: { zone: 'z1' }, spread: { group: 'orders', by: 'rack' } } },
  placementSet: { stream: 'orders', owner: 'n1', epoch: 1, placement: { require: { zone: 'z1' }, spread: { group: 'orders', by: 'rack' } }, satisfied: true },
  created: { stream: 'orders', owner: 'n1', epoch: 1, duplicate: false },
  streams: {
    streams: [{ stream: 'orders', owner: 'n1', epoch: 1, state: 'open', tail: 40, transfer: { source: 'n1', target: 'n2', reason: 'admin' } }],
    next: null,
    total: 1,
  },
  transfer: { stream: 'orders', target: 'n2' },
  transferPending: { status: 'pending', ...pending, duplicate: false },
  transferAgain: { status: 'pending', ...pending, duplicate: true },
  transfers: { transfers: [pending], next: null, total: 1 },
  transferStatus: { status: 'settled', stream: 'orders', owner: 'n2', epoch: 2 },
  rebalance: { maxInFlight: 4 },
  plan: { dryRun: true, ...preview },
  started: { dryRun: false, ...preview, progress: rebalance },
  progress: rebalance,
} as const;
