import { fileURLToPath } from 'node:url';
import { authorityControlApi, cliCall } from '../api-client.js';
import { HttpRefusal } from '../cli-errors.js';
import { homeAt } from '../authority/control-api.js';
import { keyHeader } from '../idempotency-header.js';
import type { ClusterRecord } from './cluster-record.js';
import {
  AUTHORITY_PORT_KEYS,
  writeAuthorityNodeConfigs,
  type LocalAuthorityNodeConfig,
} from './authority-node-configs.js';
import {
  startLocalCluster,
  type LocalCluster,
  type LocalClusterVariant,
  type StartOptions,
} from './local-cluster.js';

export type LocalAuthorityCluster = LocalCluster<LocalAuthorityNodeConfig>;

/** The authority a fresh cluster places in the first datacenter, so there is something to move. */
export const EXAMPLE_AUTHORITY = { authority: 'proj', home: 'east' } as const;

/**
 * Fixed, so placing it again after an interrupted first start replays the first decision
 * instead of committing a second move.
 */
const PLACEMENT_KEY = 'baton-up-place-proj';

export const authorityClusterVariant: LocalClusterVariant<LocalAuthorityNodeConfig> = {
  variant: 'authority',
  entryPoint: fileURLToPath(import.meta.resolve('@baton/host-authority-node/main')),
  portKeys: AUTHORITY_PORT_KEYS,
  writeConfigs: writeAuthorityNodeConfigs,
  ready: readyAndPlaced,
};

/**
 * Starts three authority nodes (east-1, west-1, north-1) as processes on loopback, in mode ha,
 * voters of one Raft over HTTP. Ready once every control listener answers and every member's
 * view holds the example authority, placed on the first start.
 */
export function startLocalAuthorityCluster(options: StartOptions): Promise<LocalAuthorityCluster> {
  return startLocalCluster(authorityClusterVariant, options);
}

/**
 * Where an authority lives now, as the member at `url` has applied it; undefined without a home.
 * `send` reaches the member (the local cluster's fetch, which trusts its CA).
 */
export async function homeOf(
  url: string,
  token: string,
  authority: string,
  send: typeof fetch = fetch,
): Promise<{ home: string; epoch: number } | undefined> {
  try {
    return await homeAt({ url, token, fetch: send }, authority);
  } catch (error) {
    if (error instanceof HttpRefusal && error.status === 404) return undefined;
    throw error;
  }
}

async function readyAndPlaced(
  nodes: readonly LocalAuthorityNodeConfig[],
  record: ClusterRecord,
  send: typeof fetch,
): Promise<boolean | ClusterRecord> {
  for (const node of nodes) {
    await cliCall(authorityControlApi({ url: node.url, token: record.token, fetch: send }).GET('/availability/v1/members'));
  }
  const placed = record.placed ?? EXAMPLE_AUTHORITY;
  if (!record.placed) {
    // A raw transfer_authority without a source establishes an authority that has no home:
    // it commits only once the Raft has a leader, which is what a planned transfer needs too.
    await cliCall(
      authorityControlApi({ url: nodes[0].url, token: record.token, fetch: send }).POST('/availability/v1/commands', {
        headers: keyHeader(PLACEMENT_KEY),
        body: { type: 'transfer_authority', authority: placed.authority, target: placed.home },
      }),
    );
  }
  for (const node of nodes) {
    if (!(await homeOf(node.url, record.token, placed.authority, send))) return false;
  }
  return record.placed ? true : { ...record, placed };
}
