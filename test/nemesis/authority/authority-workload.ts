import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { eventually } from '../../hosts/eventually.js';
import { callJson, type CallResult } from '../http-json.js';
import type { OperationLog, PendingRecord } from '../operation-log.js';
import type { WorkloadFault } from '../cluster.js';
import type { Workload } from '../run-nemesis.js';
import {
  startAuthorityCluster,
  type AuthorityCluster,
  type AuthorityMember,
} from './authority-cluster.js';
import {
  checkAuditedEverywhere,
  checkAuthorityHistory,
  type AuditRecord,
  type HealedAuthority,
} from './authority-checks.js';

const AUTHORITIES = 3;
const WRITE_TIMEOUT_MS = 3_000;
/** A planned transfer answers once it committed: give it a while, then it is unknown. */
const TRANSFER_TIMEOUT_MS = 8_000;

/**
 * The authority workload: a writer per authority writes at its home under the epoch it last
 * read (a freeze's 503 is a refusal); an operator POSTs planned transfers to random targets at
 * random members and now and then cancels one at a random member, while the nemesis kills,
 * pauses and partitions members and takes an audit store away. Checked after healing: see
 * authority-checks.ts.
 */
export function authorityWorkload(variation: AuthorityWorkloadVariation = {}): Workload {
  let cluster: AuthorityCluster | undefined;
  const authorities = Array.from({ length: AUTHORITIES }, (_, i) => `a${i}`);
  const initialHomes: Record<string, string> = {};

  return {
    name: variation.name ?? 'authority',
    testFile: variation.testFile ?? 'dist/test/nemesis/authority.test.js',
    progressOps: ['write'],

    async start(ctx) {
      cluster = await startAuthorityCluster(ctx, variation.raft);
      const c = cluster;
      if (variation.faults) c.faults = variation.faults(c);
      for (const [i, authority] of authorities.entries()) {
        const home = c.nodes[i % c.nodes.length].datacenter;
        initialHomes[authority] = home;
        // A raw move without a source places an authority that has no home yet.
        await eventually(
          async () => {
            const r = await callJson(`${c.nodes[0].control}/availability/v1/commands`, {
              body: { type: 'transfer_authority', authority, target: home },
              token: c.token,
              headers: { 'idempotency-key': `place-${authority}` },
              timeoutMs: 5_000,
            });
            return r.kind === 'answer' && r.status === 200;
          },
          `authority ${authority} placed in ${home}`,
          60_000,
        );
      }
      return c;
    },

    clients(ctx, signal) {
      const c = cluster!;
      return [
        ...authorities.map((a, i) =>
          writer(`w${i}`, a, ctx.rng.fork(`writer-${i}`), ctx.log, c, signal),
        ),
        operator(ctx.rng.fork('operator'), ctx.log, c, authorities, signal),
      ];
    },

    async check(ctx) {
      const c = cluster!;
      const problems: string[] = [];
      // Whatever is still waiting is called off at its source, so every outcome is decided.
      for (const authority of authorities) {
        for (const node of c.nodes) {
          await callJson(`${node.control}/availability/v1/transfers/${authority}`, {
            method: 'DELETE',
            token: c.token,
            timeoutMs: 5_000,
          });
        }
      }
      const healed: Record<string, HealedAuthority> = {};
      for (const authority of authorities) {
        try {
          healed[authority] = await convergedAuthority(c, authority);
        } catch (error) {
          problems.push((error as Error).message);
        }
      }
      problems.push(...checkAuditedEverywhere(await auditsByMember(c, authorities)));
      problems.push(...checkAuthorityHistory(ctx.log, healed, c.nodes, initialHomes));
      problems.push(...(await barriersReached(c, healed)));
      return problems;
    },

    summaryLines(ctx) {
      const writes = ctx.log.of('write');
      const frozen = writes.filter((w) => w.outcome === 'fail' && /frozen/.test(w.detail ?? ''));
      const transfers = ctx.log.of<TransferInput, unknown>('transfer');
      const retried = new Set(transfers.map((t) => t.input.id)).size;
      return [
        `  writes refused by a freeze: ${frozen.length}; transfers: ${retried} keys, ${transfers.length - retried} sent again under the same key`,
      ];
    },

    stop: async () => cluster?.close(),
  };
}

/** The same workload run another way: its own name, Raft options and faults. */
export interface AuthorityWorkloadVariation {
  name?: string;
  testFile?: string;
  raft?: Record<string, unknown>;
  faults?: (cluster: AuthorityCluster) => WorkloadFault[];
}

/** Writes at the home under the epoch last read; a stale epoch or a wrong home sends it back to read. */
async function writer(
  client: string,
  authority: string,
  rng: SeededRng,
  log: OperationLog,
  c: AuthorityCluster,
  signal: AbortSignal,
): Promise<void> {
  const clock = new SystemClock();
  let known: { home: string; epoch: number } | undefined;
  let n = 0;
  while (!signal.aborted) {
    if (!known) {
      const at = rng.pick(c.nodes);
      const r = await callJson(`${at.control}/availability/v1/authorities/${authority}`, {
        token: c.token,
        timeoutMs: 1_000,
      });
      if (r.kind === 'answer' && r.status === 200)
        known = { home: r.body.home, epoch: r.body.epoch };
      else {
        await clock.sleep(100);
        continue;
      }
    }
    const home = c.nodes.find((m) => m.datacenter === known!.home);
    if (!home) {
      known = undefined;
      continue;
    }
    const operation = `${client}-${n++}`;
    const pending = log.invoke<WriteInput, WriteOutput>(client, 'write', {
      authority,
      operation,
      epoch: known.epoch,
      member: home.id,
    });
    const answer = await callJson(
      `${home.public}/availability/v1/authorities/${authority}/writes`,
      {
        body: { operation, epoch: known.epoch },
        token: c.token,
        timeoutMs: WRITE_TIMEOUT_MS,
      },
    );
    // The freeze of a planned transfer refuses writes (503 authority frozen, before a serial is
    // handed out), and so does a new home still short of its move's final serials (503 home
    // catching up): refusals, which checkRefusalsTookNoSerial holds them to.
    const frozen =
      answer.kind === 'answer' &&
      answer.status === 503 &&
      /frozen|home-catching-up/.test(String(answer.body?.type ?? ''));
    const outcome = settle(
      pending,
      answer,
      (body) => ({ epoch: body.epoch, serial: body.serial }),
      frozen ? [409, 421, 503] : [409, 421],
    );
    if (outcome !== 'ok') known = undefined;
    await clock.sleep(frozen ? 100 + rng.int(200) : 10 + rng.int(30));
  }
}

export interface WriteInput {
  authority: string;
  operation: string;
  epoch: number;
  member: string;
}

export interface WriteOutput {
  epoch: number;
  serial: number;
}

export interface TransferInput {
  authority: string;
  id: string;
  source: string;
  target: string;
  at: string;
}

/**
 * Planned transfers to random targets, POSTed at a random member (which then drives it); after
 * an unknown outcome the same key is sent once more at another member, which waits for the
 * registration's outcome (or registers it, if the first never arrived). Now and then a cancel
 * at a random member.
 */
async function operator(
  rng: SeededRng,
  log: OperationLog,
  c: AuthorityCluster,
  authorities: readonly string[],
  signal: AbortSignal,
): Promise<void> {
  const clock = new SystemClock();
  let n = 0;
  const inFlight: Array<Promise<void>> = [];
  while (!signal.aborted) {
    await clock.sleep(800 + rng.int(1200));
    if (signal.aborted) break;
    const authority = rng.pick(authorities);
    const r = await callJson(
      `${rng.pick(c.nodes).control}/availability/v1/authorities/${authority}`,
      { token: c.token, timeoutMs: 1_000 },
    );
    if (r.kind !== 'answer' || r.status !== 200) continue;
    const source = c.nodes.find((m) => m.datacenter === r.body.home);
    if (!source) continue;
    if (rng.chance(0.25)) {
      inFlight.push(cancel(log, c, authority, rng.pick(c.nodes)));
      continue;
    }
    const target = rng.pick(c.nodes.filter((m) => m !== source));
    const id = `move-${authority}-${n++}`;
    const first = rng.pick(c.nodes);
    const again = rng.pick(c.nodes.filter((m) => m !== first));
    const input = { authority, id, source: source.datacenter, target: target.datacenter };
    // The POST answers only once the move committed: it runs on while the operator goes on.
    // An unknown outcome is retried under the same key, as an operator does: once at another
    // member (it waits for the registration's outcome), then at the first one again, which
    // resumes a registration it drove before a restart (nobody else drives it).
    inFlight.push(
      (async () => {
        let wait = 0;
        for (const at of [first, again, first, first]) {
          await clock.sleep(wait);
          if (wait > 0 && signal.aborted) return;
          const attempt = await transfer(log, c, { ...input, at: at.id }, at);
          if (!attempt.retry) return;
          wait = attempt.retryAfterMs;
        }
      })(),
    );
  }
  await Promise.all(inFlight);
}

/**
 * One POST of a transfer. `retry` when its outcome is unknown, or when the member was down after
 * an unknown one (the key may be registered there): the operator sends the key again after
 * `retryAfterMs` (the answer's Retry-After, else a second).
 */
async function transfer(
  log: OperationLog,
  c: AuthorityCluster,
  input: TransferInput,
  at: AuthorityMember,
): Promise<{ retry: boolean; retryAfterMs: number }> {
  const pending = log.invoke<TransferInput, AuditRecord>('operator', 'transfer', input);
  const answer = await callJson(`${at.control}/availability/v1/transfers`, {
    body: {
      authority: input.authority,
      source: input.source,
      target: input.target,
      reason: 'nemesis',
    },
    token: c.token,
    headers: { 'idempotency-key': input.id },
    timeoutMs: TRANSFER_TIMEOUT_MS,
  });
  // 409 (another transfer runs, cancelled, not the home) and 504 (barrier budget) moved nothing.
  const outcome = settle(pending, answer, (body) => body as AuditRecord, [409, 422, 504]);
  const seconds = answer.kind === 'answer' ? Number(answer.headers.get('retry-after')) : NaN;
  return {
    retry: outcome === 'unknown' || answer.kind === 'refused',
    retryAfterMs: Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 5) * 1000 : 1000,
  };
}

async function cancel(
  log: OperationLog,
  c: AuthorityCluster,
  authority: string,
  at: AuthorityMember,
): Promise<void> {
  const pending = log.invoke<{ authority: string; at: string }, { status: number }>(
    'operator',
    'cancel',
    { authority, at: at.id },
  );
  const answer = await callJson(`${at.control}/availability/v1/transfers/${authority}`, {
    method: 'DELETE',
    token: c.token,
    timeoutMs: 5_000,
  });
  if (answer.kind === 'answer' && [204, 404, 409].includes(answer.status))
    pending.ok({ status: answer.status }, at.id);
  else if (answer.kind === 'refused') pending.fail(answer.reason);
  else pending.unknown(answer.kind === 'lost' ? answer.reason : `${answer.status}`);
}

function settle<O>(
  pending: PendingRecord<O>,
  answer: CallResult,
  output: (body: any) => O,
  refusals: number[],
): 'ok' | 'fail' | 'unknown' {
  if (answer.kind === 'refused') {
    pending.fail(answer.reason);
    return 'fail';
  }
  if (answer.kind === 'lost') {
    pending.unknown(answer.reason);
    return 'unknown';
  }
  if (answer.status === 200) {
    pending.ok(output(answer.body));
    return 'ok';
  }
  const what = `${answer.status} ${String(answer.body?.type ?? '').replace('urn:baton:problem:', '')}`;
  if (refusals.includes(answer.status)) {
    pending.fail(what);
    return 'fail';
  }
  pending.unknown(what);
  return 'unknown';
}

/** Waits until every member has the same home, epoch and audit of `authority`; returns it. */
async function convergedAuthority(
  c: AuthorityCluster,
  authority: string,
): Promise<HealedAuthority> {
  let last: string[] = [];
  let agreed: HealedAuthority | undefined;
  try {
    await eventually(
      async () => {
        const views = await Promise.all(
          c.nodes.map(async (node) => {
            const o = await callJson(`${node.control}/availability/v1/authorities/${authority}`, {
              token: c.token,
              timeoutMs: 2_000,
            });
            const a = await callJson(
              `${node.control}/availability/v1/authorities/${authority}/audit?limit=1000`,
              { token: c.token, timeoutMs: 2_000 },
            );
            if (o.kind !== 'answer' || o.status !== 200 || a.kind !== 'answer' || a.status !== 200)
              return `${node.id}: no answer`;
            const audit = (a.body.records as AuditRecord[])
              .map((r) => ({ ...r }))
              .sort((x, y) => x.commit_index - y.commit_index);
            return JSON.stringify({ home: o.body.home, epoch: o.body.epoch, audit });
          }),
        );
        last = views;
        if (views.some((v) => v.endsWith('no answer')) || !views.every((v) => v === views[0]))
          return false;
        agreed = JSON.parse(views[0]) as HealedAuthority;
        return true;
      },
      `every member to agree on ${authority}'s home, epoch and audit`,
      40_000,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${last.map((v) => v.slice(0, 400)).join('\n')}`);
  }
  return agreed!;
}

/** Each member's audit (record ids) of each authority, as it answers now. */
async function auditsByMember(
  c: AuthorityCluster,
  authorities: readonly string[],
): Promise<Record<string, Record<string, string[] | undefined>>> {
  const audits: Record<string, Record<string, string[] | undefined>> = {};
  for (const node of c.nodes) {
    audits[node.id] = {};
    for (const authority of authorities) {
      const a = await callJson(
        `${node.control}/availability/v1/authorities/${authority}/audit?limit=1000`,
        { token: c.token, timeoutMs: 5_000 },
      );
      audits[node.id][authority] =
        a.kind === 'answer' && a.status === 200
          ? (a.body.records as AuditRecord[]).map((r) => r.id)
          : undefined;
    }
  }
  return audits;
}

/** Every committed move's target has applied its source's feed through the barrier. */
async function barriersReached(
  c: AuthorityCluster,
  healed: Record<string, HealedAuthority>,
): Promise<string[]> {
  const problems: string[] = [];
  for (const [authority, view] of Object.entries(healed)) {
    for (const record of view.audit) {
      const source = c.nodes.find((m) => m.datacenter === record.source);
      const target = c.nodes.find((m) => m.datacenter === record.target);
      if (!source || !target || record.barrier === undefined) continue;
      const r = await callJson(`${target.public}/availability/v1/feeds/${source.id}/applied`, {
        headers: c.peerHeaders(source.id),
        timeoutMs: 2_000,
      });
      if (r.kind !== 'answer' || r.status !== 200) {
        problems.push(
          `${authority}: could not read how far ${target.id} applied ${source.id}'s feed: ${JSON.stringify(r).slice(0, 200)}`,
        );
        continue;
      }
      if (r.body.serial < record.barrier) {
        problems.push(
          `${authority}: move ${record.id} to ${record.target} committed with barrier ${record.barrier}, but ${target.id} has applied ${source.id}'s feed only through ${r.body.serial}`,
        );
      }
    }
  }
  return problems;
}
