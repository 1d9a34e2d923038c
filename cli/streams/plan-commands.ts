import type { Command } from 'commander';
import { cliCall, streamApi } from '../api-client.js';
import { MILLISECONDS_HELP, SECONDS_HELP, durationMs, idempotencyKeyArgument, integerAtLeast, positiveNumber } from '../arguments.js';
import { TimedOutError, UsageError } from '../cli-errors.js';
import { connectionOf, withConnectionOptions } from '../connection.js';
import { keyHeader } from '../idempotency-header.js';
import { agreedToMove } from '../confirm.js';
import { outputFor, type CliContext } from '../context.js';
import type { HumanView } from '../output.js';
import { progressView } from '../progress.js';
import { table } from '../table.js';
import { pollUntil } from '../wait.js';
import { SystemClock } from '@baton/kernel';
import type { PlanSummary, PlanView } from '@baton/stream-transfer';
import { STREAM_API } from './stream-api.js';
import { DEFAULT_INTERVAL_MS, seconds } from './transfer-commands.js';

const GOALS = ['rebalance', 'drain', 'restore-preferences'] as const;
const DEFAULT_PLAN_TIMEOUT_MS = 600_000;


function goalText(plan: PlanSummary): string {
  return plan.goal.type === 'drain' ? `drain ${plan.goal.nodes.join(',')}` : plan.goal.type;
}

function limitsText(plan: PlanSummary): string {
  return `${plan.limits.maxConcurrent} at once${plan.limits.movesPerSecond === null ? '' : `, ${plan.limits.movesPerSecond}/s`}`;
}

function progressText(plan: PlanSummary): string {
  const p = plan.progress;
  return `${p.done} of ${plan.planned} moved, ${p.inFlight} moving, ${p.waiting} waiting${p.skipped ? `, ${p.skipped} skipped` : ''}${p.dropped ? `, ${p.dropped} dropped` : ''}`;
}

/** A plan for a person: what it is, where it stands, its first moves and its predicted effect. */
export function planLines(plan: PlanView, view: HumanView): string[] {
  const lines = [
    `${plan.id}: ${goalText(plan)}, ${plan.status}${plan.stale ? ' (stale: the cluster changed since; create it again)' : ''}`,
    `  ${plan.planned} moves, ${limitsText(plan)}; ${progressText(plan)}`,
  ];
  if (plan.moves.length > 0) {
    lines.push('', ...table(['STREAM', 'FROM', 'TO'], plan.moves.map((m) => [m.stream, m.source ?? '-', m.target]), view));
    if (plan.truncated) lines.push(`  ... and ${plan.progress.waiting - plan.moves.length} more`);
  }
  const e = plan.effect;
  lines.push('', ...table(['NODE', 'BEFORE', 'AFTER', 'OUT', 'IN'], e.byNode.map((n) => [n.node, String(n.before), String(n.after), String(n.out), String(n.in)]), view));
  if (e.byLabel.length > 0) lines.push('', ...table(['LABEL', 'VALUE', 'BEFORE', 'AFTER'], e.byLabel.map((l) => [l.label, l.value, String(l.before), String(l.after)]), view));
  const v = e.violations;
  lines.push(
    '',
    `violations before -> after: required labels ${v.required.before} -> ${v.required.after}, preferences ${v.preferences.before} -> ${v.preferences.after}, uneven spread groups ${v.spread.before} -> ${v.spread.after}`,
  );
  if (e.unplaceableCount > 0) lines.push(`${e.unplaceableCount} stream(s) no node can take as their placement asks: ${e.unplaceable.join(', ')}`);
  return lines;
}

/** `baton plan create|list|show|execute|set|cancel`: plans as objects on a stream cluster. */
export function registerPlan(program: Command, ctx: CliContext): void {
  const plan = program
    .command('plan')
    .description('stream-transfer variant: plan a rebalance, a drain or a return to preferred labels, look at it, then run it at limits you can change')
    .addHelpText(
      'after',
      `
A plan moves nothing until executed. It shows its moves and what it does per node and per label
value (zone, rack), before and after, with the placement violations it leaves. One plan runs at
a time; a plan made before the cluster changed is refused at execute (exit 1, 412): make it again.

Examples:
  baton plan create --goal drain --nodes n3 --max-concurrent 4 --moves-per-second 10
  baton plan execute plan-812 --yes
  baton plan set plan-812 --max-concurrent 1
  baton plan cancel plan-812`,
    );

  withConnectionOptions(plan.command('create'), STREAM_API)
    .description('plan a goal and show it: its moves and its predicted effect (nothing moves)')
    .addHelpText('after', `
Examples:
  baton plan create --goal rebalance
  baton plan create --goal drain --nodes n3,n4 --max-concurrent 4 --moves-per-second 10
  baton plan create --goal restore-preferences -o json`)
    .requiredOption('--goal <goal>', `what for: ${GOALS.join(', ')}`)
    .option('--nodes <nodes>', 'with --goal drain: the nodes to empty, comma-separated')
    .option('--max-concurrent <n>', 'moves in flight at once (default 16)', integerAtLeast(1, 10_000))
    .option('--moves-per-second <n>', 'moves started per second at most (default: no pace)', positiveNumber)
    .option('--key <idempotency-key>', 'retrying with the same key answers the first decision', idempotencyKeyArgument)
    .action(async (options: { goal: string; nodes?: string; maxConcurrent?: number; movesPerSecond?: number; key?: string }, command: Command) => {
      if (!(GOALS as readonly string[]).includes(options.goal)) throw new UsageError(`--goal is one of ${GOALS.join(', ')}, not ${JSON.stringify(options.goal)}`);
      const body = {
        goal: options.goal as (typeof GOALS)[number],
        ...(options.nodes !== undefined ? { nodes: options.nodes.split(',').map((n) => n.trim()).filter((n) => n !== '') } : {}),
        limits: {
          ...(options.maxConcurrent !== undefined ? { maxConcurrent: options.maxConcurrent } : {}),
          ...(options.movesPerSecond !== undefined ? { movesPerSecond: options.movesPerSecond } : {}),
        },
      };
      const created = await cliCall(streamApi(connectionOf(ctx, command, STREAM_API)).POST('/v1/admin/plans', { body, headers: keyHeader(options.key) }));
      outputFor(ctx, command).result(created, (p, view) => [...planLines(p, view), '', `run it with: baton plan execute ${p.id}`], (p) => [p.id]);
    });

  withConnectionOptions(plan.command('list'), STREAM_API)
    .description('the plans the cluster keeps, newest first')
    .addHelpText('after', `
Examples:
  baton plan list
  baton plan list -o json`)
    .action(async (_options: unknown, command: Command) => {
      const { plans } = await cliCall(streamApi(connectionOf(ctx, command, STREAM_API)).GET('/v1/admin/plans'));
      outputFor(ctx, command).result({ plans }, (r, view) =>
        table(['ID', 'GOAL', 'STATUS', 'MOVES', 'LIMITS', 'PROGRESS'], r.plans.map((p) => [p.id, goalText(p), p.stale ? `${p.status} (stale)` : p.status, String(p.planned), limitsText(p), progressText(p)]), view),
      );
    });

  withConnectionOptions(plan.command('show'), STREAM_API)
    .description('a plan: status, progress, first moves and predicted effect')
    .addHelpText('after', `
Examples:
  baton plan show plan-812`)
    .argument('<plan>', 'the plan id (plan-<n>)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const shown = await cliCall(streamApi(connectionOf(ctx, command, STREAM_API)).GET('/v1/admin/plans/{plan}', { params: { path: { plan: id } } }));
      outputFor(ctx, command).result(shown, planLines, (p) => [p.id]);
    });

  withConnectionOptions(plan.command('execute'), STREAM_API)
    .description('run a plan, showing progress until every move settled')
    .addHelpText('after', `
A plan made before the cluster changed (nodes, owners, placements, transfers) is refused: exit
1 (412), nothing moved; create it again. One plan runs at a time (exit 1, 409).

Examples:
  baton plan execute plan-812 --yes
  baton plan execute plan-812 --yes --no-wait --json`)
    .argument('<plan>', 'the plan id')
    .option('-y, --yes', 'run it without asking first (needed when stdin is not a terminal)')
    .option('--no-wait', 'return once it runs; the cluster carries it out')
    .option('--timeout <duration>', `how long to wait for it to end (default 600 s; ${SECONDS_HELP})`, durationMs('s'))
    .option('--interval <duration>', `how often to check progress (default 250 ms; ${MILLISECONDS_HELP})`, durationMs('ms', 10))
    .option('--key <idempotency-key>', 'retrying with the same key answers the first decision', idempotencyKeyArgument)
    .action(async (id: string, options: { yes?: boolean; wait: boolean; timeout?: number; interval?: number; key?: string }, command: Command) => {
      const output = outputFor(ctx, command);
      const client = streamApi(connectionOf(ctx, command, STREAM_API));
      const path = { plan: id };
      if (!(await agreedToMove(ctx, options, `plan execute ${id}`, `run plan ${id}?`))) {
        output.result({ id, declined: true }, () => 'nothing moved');
        return;
      }
      let last = await cliCall(client.POST('/v1/admin/plans/{plan}/execute', { params: { path }, headers: keyHeader(options.key) }));
      if (options.wait && last.status === 'running') {
        const view = progressView(ctx, output, `running ${id}`);
        const timeoutMs = options.timeout ?? DEFAULT_PLAN_TIMEOUT_MS;
        try {
          const waited = await pollUntil(
            () => cliCall(client.GET('/v1/admin/plans/{plan}', { params: { path } })),
            (p) => p.status !== 'running' && p.progress.inFlight === 0,
            (p) => view.update({ done: p.progress.done + p.progress.skipped, total: p.planned, line: progressText(p), data: { id: p.id, status: p.status, ...p.progress } }),
            { clock: new SystemClock(), intervalMs: options.interval ?? DEFAULT_INTERVAL_MS, timeoutMs },
          );
          last = waited.reading;
          if (!waited.done) throw new TimedOutError('plan_unfinished', `${id} is still running after ${seconds(timeoutMs)}: ${progressText(last)}; it goes on in the cluster: "baton plan show ${id}" follows it`);
        } finally {
          view.stop();
        }
      }
      output.result(last, (p) => `${p.id}: ${p.status}; ${progressText(p)}`, (p) => [p.id]);
    });

  withConnectionOptions(plan.command('set'), STREAM_API)
    .description("change a plan's limits, also while it runs")
    .addHelpText('after', `
Moves in flight above a lowered --max-concurrent finish; none starts until the plan is below it.

Examples:
  baton plan set plan-812 --max-concurrent 1
  baton plan set plan-812 --moves-per-second 2
  baton plan set plan-812 --no-pace`)
    .argument('<plan>', 'the plan id')
    .option('--max-concurrent <n>', 'moves in flight at once', integerAtLeast(1, 10_000))
    .option('--moves-per-second <n>', 'moves started per second at most', positiveNumber)
    .option('--no-pace', 'take the pace off: as fast as --max-concurrent allows')
    .action(async (id: string, options: { maxConcurrent?: number; movesPerSecond?: number; pace: boolean }, command: Command) => {
      if (!options.pace && options.movesPerSecond !== undefined) throw new UsageError('--no-pace takes the pace off: give it without --moves-per-second');
      const body = {
        ...(options.maxConcurrent !== undefined ? { maxConcurrent: options.maxConcurrent } : {}),
        ...(options.movesPerSecond !== undefined ? { movesPerSecond: options.movesPerSecond } : {}),
        ...(!options.pace ? { movesPerSecond: null } : {}),
      };
      if (Object.keys(body).length === 0) throw new UsageError('say what to change: --max-concurrent, --moves-per-second or --no-pace');
      const changed = await cliCall(streamApi(connectionOf(ctx, command, STREAM_API)).PATCH('/v1/admin/plans/{plan}', { params: { path: { plan: id } }, body }));
      outputFor(ctx, command).result(changed, (p) => `${p.id}: ${limitsText(p)} (${p.status})`, (p) => [p.id]);
    });

  withConnectionOptions(plan.command('cancel'), STREAM_API)
    .description('stop a plan: moves not started are dropped, those in flight finish')
    .addHelpText('after', `
Examples:
  baton plan cancel plan-812`)
    .argument('<plan>', 'the plan id')
    .action(async (id: string, _options: unknown, command: Command) => {
      const cancelled = await cliCall(streamApi(connectionOf(ctx, command, STREAM_API)).DELETE('/v1/admin/plans/{plan}', { params: { path: { plan: id } } }));
      outputFor(ctx, command).result(cancelled, (p) => `${p.id}: cancelled; ${progressText(p)}`, (p) => [p.id]);
    });
}
