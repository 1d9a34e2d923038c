import type { Command } from 'commander';
import { MAX_NODE_SLOTS } from '@baton/stream-transfer';
import { integerAtLeast } from '../arguments.js';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { table } from '../table.js';
import { cliCall } from '../api-client.js';
import { allNodes } from './all-pages.js';
import { STREAM_API, streamNode } from './stream-api.js';

/** `baton streams nodes` and `baton streams nodes add`. */
export function registerNodeCommands(streams: Command, ctx: CliContext): void {
  const nodes = withConnectionOptions(streams.command('nodes'), STREAM_API)
    .description(
      'list the registered nodes: liveness, capacity, streams owned, transfers in and out, drain state',
    )
    .addHelpText(
      'after',
      `
LIVENESS is Alive, Suspect or Dead, from the nodes' lease renewals as the metadata leader sees
them; the answering node shows how long ago each renewal was seen when it is that leader. A Dead
node's streams move with "baton streams failover NODE" (or by themselves, see its help).

Examples:
  baton streams nodes
  baton streams nodes --json | jq '.nodes[] | select(.draining)'
  baton streams nodes --json | jq '.nodes[] | select(.liveness == "Dead")'
  baton streams nodes add n4 --address http://10.0.0.4:7700 --slots 500`,
    )
    .action(async (_options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const result = await allNodes(streamNode(connectionOf(ctx, command, STREAM_API)));
      // Labels get a column once any node carries one (always with -o wide).
      const labelled = (wide: boolean) => wide || result.nodes.some((n) => Object.keys(n.labels ?? {}).length > 0);
      const labelsOf = (labels: Record<string, string> | undefined) =>
        Object.entries(labels ?? {}).map(([key, value]) => `${key}=${value}`).join(',') || '-';
      output.result(result, (r, view) =>
        r.nodes.length === 0
          ? 'no nodes are registered'
          : table(
              ['NODE', 'ADDRESS', 'LIVENESS', 'SLOTS', 'OWNED', 'IN', 'OUT', 'STATE', ...(labelled(view.wide) ? ['LABELS'] : []), ...(view.wide ? ['LAST RENEWAL'] : [])],
              r.nodes.map((n) => [
                n.id,
                n.address,
                n.liveness + (n.lastRenewalMsAgo === null ? '' : ` (${(n.lastRenewalMsAgo / 1000).toFixed(1)} s)`),
                String(n.slots),
                String(n.owned),
                String(n.incoming),
                String(n.outgoing),
                n.drained ? 'drained' : n.draining ? 'draining' : 'in service',
                ...(labelled(view.wide) ? [labelsOf(n.labels)] : []),
                ...(view.wide ? [n.lastRenewalMsAgo === null ? '-' : `${n.lastRenewalMsAgo} ms ago`] : []),
              ]),
              view,
            ),
      );
    });

  withConnectionOptions(nodes.command('add'), STREAM_API)
    .description('register a node by hand, or change its address or capacity')
    .argument('<node>', "the node's id (the node.self of its config)")
    .requiredOption('--address <url>', 'the base URL clients are sent to for its streams')
    .option('--slots <n>', `how many streams it may own (at most ${MAX_NODE_SLOTS})`, integerAtLeast(1, MAX_NODE_SLOTS), 1000)
    .addHelpText(
      'after',
      `
A node registers itself when it starts; this is for a node started with register: false, or to
change the address or capacity of one already registered. Registering the same values again
is not an error.

Examples:
  baton streams nodes add n4 --address http://10.0.0.4:7700
  baton streams nodes add n4 --address http://10.0.0.4:7700 --slots 2000`,
    )
    .action(async (node: string, options: { address: string; slots: number }, command: Command) => {
      const output = outputFor(ctx, command);
      const client = streamNode(connectionOf(ctx, command, STREAM_API));
      const result = await cliCall(client.POST('/v1/admin/nodes', { body: { id: node, address: options.address, slots: options.slots } }));
      output.result(result, (r) =>
        r.duplicate
          ? `${r.node.id} was already registered at ${r.node.address} with ${r.node.slots} slots`
          : `registered ${r.node.id} at ${r.node.address} with ${r.node.slots} slots`,
      );
    });
}
