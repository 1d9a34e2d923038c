import type { outputFor } from '../context.js';
import {
  EXAMPLE_AUTHORITY,
  homeOf,
  type LocalAuthorityCluster,
} from '../local-cluster/local-authority-cluster.js';
import type { LocalStreamCluster } from '../local-cluster/local-stream-cluster.js';
import type { SavedUpContext } from '../user-config.js';

type Output = ReturnType<typeof outputFor>;

/** What the summary says besides the cluster: the command that restarts it, the context it made current. */
export interface UpSummaryExtras {
  /** `baton up --data-dir DIR --variant authority`: as given, so it resumes this very cluster. */
  restart: string;
  context?: SavedUpContext;
}

const stopHint = (command: string) =>
  `Ctrl-C stops the cluster (data is kept; "${command}" again resumes).`;

/** The context line: which context now points at this cluster, and what it was named after. */
function contextLines(context: SavedUpContext | undefined): string[] {
  if (!context) return [];
  return [
    `context: ${context.name} (named after the ${context.namedAfter}), now current: baton commands here need no --url or --token ` +
      `(token in ${context.tokenFile}, 0600; "baton context list" shows the others)`,
  ];
}

/**
 * How a person reaches members that serve TLS: the CA to trust, in the browser, for baton
 * and node (NODE_EXTRA_CA_CERTS, read when a process starts) and for curl.
 */
function clusterTrust(caFile: string | undefined) {
  return {
    line: caFile ? [`TLS: the members serve HTTPS with certificates of the cluster CA ${caFile}`] : [],
    dashboardHint: caFile
      ? '(open it in a browser that trusts the cluster CA, and paste the admin token)'
      : '(open it in a browser and paste the admin token)',
    export: caFile ? [`  export NODE_EXTRA_CA_CERTS=${caFile}`] : [],
    curl: caFile ? `curl --cacert ${caFile}` : 'curl',
  };
}

/** Said under the commands when they are not typed as plain `baton`. */
const linkHint = (baton: string) =>
  baton === 'baton' ? [] : ['  # "npm link" in the checkout once puts baton on your PATH'];

/**
 * What `baton up` prints once the stream nodes answer: where, the token, what to try. `baton`
 * is how the person runs this CLI from where they are (see batonInvocation).
 */
export function printStreamCluster(
  output: Output,
  cluster: LocalStreamCluster,
  baton = 'baton',
  extras: UpSummaryExtras = { restart: `${baton} up` },
): void {
  const first = cluster.nodes[0].url;
  const { caFile } = cluster.nodes[0];
  const trust = clusterTrust(caFile);
  output.result(
    {
      variant: 'stream',
      resumed: cluster.resumed,
      dataDir: cluster.dataDir,
      token: cluster.record.token,
      dashboard: `${first}/ui/`,
      ...(caFile ? { caFile } : {}),
      ...(extras.context ? { context: extras.context.name } : {}),
      nodes: cluster.nodes.map(({ id, url, logFile }) => ({ id, url, logFile })),
    },
    (data) => [
      `local stream cluster ${data.resumed ? 'resumed' : 'started'} (data: ${data.dataDir})`,
      ...data.nodes.map((node) => `  ${node.id}  ${node.url}   log: ${node.logFile}`),
      `admin token: ${data.token}`,
      ...trust.line,
      `dashboard: ${data.dashboard}  ${trust.dashboardHint}`,
      ...contextLines(extras.context),
      '',
      'Try:',
      ...trust.export,
      `  export BATON_URL=${first} BATON_TOKEN=${data.token}`,
      `  ${baton} status`,
      `  ${baton} streams create events`,
      `  ${baton} streams append events hello world`,
      `  ${baton} streams read events`,
      `  ${baton} streams transfer events --to n2`,
      `  ${baton} streams nodes`,
      ...linkHint(baton),
      `  ${trust.curl} -H "Authorization: Bearer ${data.token}" ${first}/v1/streams/events`,
      `  ${trust.curl} ${first}/metrics`,
      '',
      stopHint(extras.restart),
    ],
  );
}

/**
 * What `baton up --variant authority` prints: each member's datacenter and listeners, the
 * token, where the example authority lives now, and commands that work from there (a restart
 * suggests moving it on from wherever it was left).
 */
export async function printAuthorityCluster(
  output: Output,
  cluster: LocalAuthorityCluster,
  baton = 'baton',
  extras: UpSummaryExtras = { restart: `${baton} up --variant authority` },
): Promise<void> {
  const { token } = cluster.record;
  const first = cluster.nodes[0];
  const { authority } = cluster.record.placed ?? EXAMPLE_AUTHORITY;
  const where = await homeOf(first.url, token, authority, cluster.fetch);
  const { caFile } = first;
  const trust = clusterTrust(caFile);
  const datacenters = cluster.nodes.map((node) => node.datacenter);
  const home = where?.home ?? datacenters[0];
  const target = datacenters[(datacenters.indexOf(home) + 1) % datacenters.length];
  output.result(
    {
      variant: 'authority',
      resumed: cluster.resumed,
      dataDir: cluster.dataDir,
      token,
      dashboard: `${first.url}/ui/`,
      ...(caFile ? { caFile } : {}),
      ...(extras.context ? { context: extras.context.name } : {}),
      nodes: cluster.nodes.map(({ id, datacenter, url, publicUrl, logFile }) => ({
        id,
        datacenter,
        control: url,
        public: publicUrl,
        logFile,
      })),
      authority: { authority, home: where?.home ?? null, epoch: where?.epoch ?? null },
    },
    (data) => [
      `local authority cluster ${data.resumed ? 'resumed' : 'started'} (data: ${data.dataDir})`,
      ...data.nodes.map(
        (node) =>
          `  ${node.id.padEnd(8)} ${node.datacenter.padEnd(6)} control ${node.control}  public ${node.public}   log: ${node.logFile}`,
      ),
      `admin token: ${data.token}`,
      ...trust.line,
      `dashboard: ${data.dashboard}  ${trust.dashboardHint}`,
      `authority ${authority}: home ${data.authority.home ?? 'none'}, epoch ${data.authority.epoch ?? '-'}`,
      ...contextLines(extras.context),
      '',
      'Try:',
      ...trust.export,
      `  export BATON_URL=${first.url} BATON_TOKEN=${data.token}`,
      `  ${baton} status`,
      `  ${baton} authority members`,
      `  ${baton} authority write ${authority} "publish 1.0.0"`,
      `  ${baton} authority transfer ${authority} --from ${home} --to ${target} --reason "rebalance"`,
      `  ${baton} authority status ${authority}`,
      `  ${baton} authority audit ${authority}`,
      '  # south is no datacenter of the roster (refused unless --allow-unknown-target): it never',
      '  # catches up, so this transfer waits (the command stops waiting after 2 s, exit 3) until it is cancelled',
      `  ${baton} authority transfer ${authority} --from ${target} --to south --reason "try south" --allow-unknown-target --timeout 2s`,
      `  ${baton} authority cancel ${authority}`,
      `  ${baton} authority create docs --home ${target}`,
      ...linkHint(baton),
      `  ${trust.curl} ${first.url}/metrics`,
      '',
      stopHint(extras.restart),
    ],
  );
}
