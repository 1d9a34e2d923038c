import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import type { WorkloadFault } from '../cluster.js';
import type { OperationLog } from '../operation-log.js';
import { livenessView, owners, recordedAdmin } from './stream-admin.js';
import type { StreamCluster } from './stream-cluster.js';

/** How long a killed node's streams may take to fail over before the fault says they did not. */
export const FAILOVER_DEADLINE_MS = 30_000;
/** How long the schedule waits for a restarted node to serve before it goes on. */
const RECOVERY_WAIT_MS = 3_000;

/** A node killed for a failover: when, what it owned, and whether its streams moved. */
export interface FailoverEvent {
  trigger: 'automatic' | 'operator';
  node: string;
  /** Streams the node owned when it was killed. */
  streams: string[];
  killedAt: number;
  /** When the survivors' metadata first named other owners for all of them. */
  movedAt?: number;
  /** Why it did not move while the run lasted (the deadline passed), when it did not. */
  stuck?: string;
}

/**
 * The stream variant's own faults:
 * - `failover`: kill -9 a node and keep it down until the metadata leader fails its streams
 *   over by itself (Dead, then `autoFailoverAfterMs` more), then restart it;
 * - `operator-failover`: kill -9 a node, wait until it is published Dead, POST
 *   /v1/admin/nodes/{node}/failover at a random survivor (recorded as operation `failover`),
 *   keep it down a while, restart it;
 * - `drain`: POST a drain of the node at a random member, hold, undrain it (recorded as
 *   `drain` / `undrain`).
 * `events` collects every failover for the checks and the summary.
 */
export function streamFaults(
  c: StreamCluster,
  log: OperationLog,
  rng: SeededRng,
  events: FailoverEvent[],
): WorkloadFault[] {
  const clock = new SystemClock();
  const ids = Object.keys(c.urls);
  const sleep = (ms: number, signal: AbortSignal) => clock.sleep(ms, signal).catch(() => undefined);
  const other = (node: string) => rng.pick(ids.filter((id) => id !== node));
  const member = (id: string) => c.members.find((m) => m.id === id)!;

  /** Polls the survivors until `done` holds, the deadline passes or the run ends. */
  const until = async (
    node: string,
    done: (at: string) => Promise<boolean>,
    signal: AbortSignal,
  ): Promise<boolean> => {
    const deadline = clock.now() + FAILOVER_DEADLINE_MS;
    while (!signal.aborted && clock.now() < deadline) {
      if (await done(other(node)).catch(() => false)) return true;
      await sleep(100, signal);
    }
    return false;
  };

  /**
   * Kills `wanted`, or when it owns no stream the owner of a random stream (a failover of an
   * empty node moves nothing).
   */
  const killFor = async (trigger: FailoverEvent['trigger'], wanted: string) => {
    const before = await owners(c, other(wanted));
    const owning = before ? [...new Set(before.values())].filter((o) => ids.includes(o)) : [];
    const node = owning.length === 0 || owning.includes(wanted) ? wanted : rng.pick(owning);
    const streams = before ? [...before].filter(([, o]) => o === node).map(([s]) => s) : [];
    await member(node).process.kill();
    const event: FailoverEvent = { trigger, node, streams, killedAt: log.now() };
    events.push(event);
    return event;
  };

  const movedAway = (event: FailoverEvent) => async (at: string) => {
    const now = await owners(c, at);
    return now !== undefined && event.streams.every((s) => now.get(s) !== event.node);
  };

  const restart = async (node: string, signal: AbortSignal) => {
    const m = member(node);
    if (!m.process.running) m.process.start();
    const ready = c.waitReady(node);
    ready.catch(() => undefined);
    await Promise.race([ready, sleep(RECOVERY_WAIT_MS, signal)]);
  };

  const settle = (event: FailoverEvent, moved: boolean, signal: AbortSignal) => {
    if (moved) event.movedAt = log.now();
    else if (!signal.aborted)
      event.stuck = `still owned by ${event.node} ${FAILOVER_DEADLINE_MS} ms after it was killed`;
    else event.stuck = 'the run ended first';
  };

  const owned = (e: FailoverEvent) => (e.streams.length > 0 ? e.streams.join(', ') : 'no stream');
  const took = (e: FailoverEvent) =>
    e.movedAt !== undefined ? `moved after ${Math.round(e.movedAt - e.killedAt)} ms` : e.stuck;

  return [
    {
      kind: 'failover',
      async apply(wanted, holdMs, signal) {
        const event = await killFor('automatic', wanted);
        const node = event.node;
        settle(event, await until(node, movedAway(event), signal), signal);
        await sleep(holdMs / 2, signal);
        await restart(node, signal);
        return `kill -9 ${node} (owner of ${owned(event)}) until failed over automatically: ${took(event)}; restarted`;
      },
    },
    {
      kind: 'operator-failover',
      async apply(wanted, holdMs, signal) {
        const event = await killFor('operator', wanted);
        const node = event.node;
        const dead = await until(
          node,
          async (at) => (await livenessView(c, at))?.[node] === 'Dead',
          signal,
        );
        let said = 'never published Dead';
        if (dead) {
          const answer = await recordedAdmin(
            log,
            'operator',
            'failover',
            { node },
            c,
            other(node),
            `/v1/admin/nodes/${node}/failover`,
          );
          said = `POST failover: ${answer.outcome}${answer.body?.duplicate ? ' (already failed over)' : ''}`;
        }
        settle(event, dead && (await until(node, movedAway(event), signal)), signal);
        await sleep(holdMs / 2, signal);
        await restart(node, signal);
        return `kill -9 ${node} (owner of ${owned(event)}), ${said}, ${took(event)}; restarted`;
      },
    },
    {
      kind: 'drain',
      async apply(node, holdMs, signal) {
        const drain = await recordedAdmin(
          log,
          'operator',
          'drain',
          { node },
          c,
          rng.pick(ids),
          `/v1/admin/nodes/${node}/drain`,
        );
        await sleep(holdMs, signal);
        // The undrain is retried: a drain left behind would starve the node for the rest of the run.
        let undrain = 'unknown';
        for (let i = 0; i < 3 && undrain !== 'ok'; i++)
          undrain = (
            await recordedAdmin(
              log,
              'operator',
              'undrain',
              { node },
              c,
              rng.pick(ids),
              `/v1/admin/nodes/${node}/undrain`,
            )
          ).outcome;
        return `drain ${node} (${drain.outcome}) for ${holdMs} ms, undrain (${undrain})`;
      },
    },
  ];
}
