import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { invalidBodyField, problems, readValidBody, validate } from '@baton/http';
import type { Clock } from '@baton/contracts';
import { MAX_MOVES_PER_SECOND } from './command-schema.js';
import type { StreamCommand, StreamResult } from './commands.js';
import type { MaintenanceBudget } from './maintenance.js';
import { nodeStatus, type RenewalAge } from './progress.js';
import type { StreamMetadata } from './stream-metadata.js';

/** The longest window one request schedules. */
export const MAX_MAINTENANCE_MS = 30 * 24 * 3_600_000;
export const DEFAULT_MOVES_PER_SECOND = 10;
export const DEFAULT_MAINTENANCE_BUDGET: MaintenanceBudget = { maxNodes: 1 };

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "2h", "90m", "1h30m", "45s" (or a number of milliseconds) as milliseconds; undefined when malformed. */
export function durationMs(raw: string | number): number | undefined {
  if (typeof raw === 'number') return raw;
  const parts = [...raw.matchAll(/(\d+)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== raw) return undefined;
  return parts.reduce((total, [, amount, unit]) => total + Number(amount) * UNIT_MS[unit!]!, 0);
}

export const maintenanceBody = z
  .object({
    start: z
      .union([z.iso.datetime({ offset: true, error: 'start is an ISO 8601 time (2026-12-03T22:00:00Z)' }), z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)])
      .optional()
      .describe('When the window begins (ISO 8601, or milliseconds since the epoch); now when left out'),
    duration: z
      .union([z.string().regex(/^(\d+(ms|s|m|h|d))+$/, 'duration is like 2h, 90m, 1h30m or 45s'), z.number().int().positive('duration must be > 0')])
      .describe('How long the window lasts: 2h, 90m, 1h30m, 45s, or milliseconds'),
    movesPerSecond: z
      .number()
      .positive('movesPerSecond must be > 0')
      .max(MAX_MOVES_PER_SECOND, `movesPerSecond must be <= ${MAX_MOVES_PER_SECOND}`)
      .default(DEFAULT_MOVES_PER_SECOND)
      .describe('The pace streams are handed back at when the window ends'),
  })
  .strict();

const nodeParam = z.object({ node: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'a node id') });

export interface MaintenanceRouteDeps {
  decide(ctx: Context, command: StreamCommand): Promise<Extract<StreamResult, { ok: true }>>;
  state(): Promise<StreamMetadata>;
  clock: Clock;
  budget: MaintenanceBudget;
  age?: RenewalAge;
}

/**
 * POST /nodes/{node}/maintenance schedules a window (the node drains at its start, gets streams
 * back at its pace after its end; past the cluster budget 409), DELETE ends it now.
 */
export function addMaintenanceRoutes(router: Router, deps: MaintenanceRouteDeps): void {
  router.post('/nodes/:node/maintenance', async (ctx) => {
    const { node } = validate(nodeParam, ctx.params, 'path');
    const body = await readValidBody(ctx, maintenanceBody);
    const now = deps.clock.now();
    const startAt = body.start === undefined ? now : typeof body.start === 'number' ? body.start : Date.parse(body.start);
    const length = durationMs(body.duration);
    if (length === undefined || length < 1_000 || length > MAX_MAINTENANCE_MS) {
      throw invalidBodyField('duration', `duration must be from 1s to ${MAX_MAINTENANCE_MS / 86_400_000}d`);
    }
    const endAt = startAt + length;
    if (endAt <= now) throw invalidBodyField('start', 'the window is over before it would begin: it ends in the past');
    await deps.decide(ctx, {
      type: 'schedule-maintenance',
      node,
      startAt: Math.floor(Math.max(startAt, 0)),
      endAt: Math.floor(endAt),
      movesPerSecond: body.movesPerSecond,
      budget: deps.budget,
    });
    ctx.status = 201;
    ctx.body = { node: nodeStatus(await deps.state(), node, deps.age) };
  });

  router.delete('/nodes/:node/maintenance', async (ctx) => {
    const { node } = validate(nodeParam, ctx.params, 'path');
    const current = await deps.state();
    if (!current.node(node)) throw problems.notFound(`node ${node} is not registered`, { node });
    if (!current.node(node)!.maintenance) throw problems.notFound(`node ${node} has no maintenance window`, { node });
    await deps.decide(ctx, { type: 'end-maintenance', node });
    ctx.body = { node: nodeStatus(await deps.state(), node, deps.age) };
  });
}
