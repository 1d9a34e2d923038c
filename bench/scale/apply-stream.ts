// Part "apply": what one command costs the state machine alone (no consensus, no I/O) as the
// state grows, per command type, at 1k / 10k / 100k / 1M records (BENCH_SCALE_N caps the sweep);
// and the heap each stream and each authority takes. The goal: the cost at 1M is at most twice
// the cost at 1k (every command O(1) or O(log n)). Costs are the process's CPU time per command
// (p50/p99; on a shared machine wall time mostly measures being descheduled), wall time beside.
// Needs --expose-gc for the heap figures.
//
// Streams: 10 nodes with room for everything, N streams spread by placement, then SAMPLES of
// each command against that state: create (a new stream), transfer (a stream to another node),
// close and complete (settling the transfer, as a source's watcher does), drain (the command:
// mark a node and start its first moves), drain step (a complete that starts the next move of a
// drain, the work a drain of 10,000 streams repeats 10,000 times), undrain.
// Authorities: N established, then establish (a new one), move (transfer_authority of a known
// one), and the planned-transfer steps register, freeze, record_final, commit, ack_audit.
// Baseline: `move`'s access pattern (read an authority's home, then replace its record) on a plain
// Map of N records behind the same apply call and timing: what any map pays from 1k to 1M
// (cache and TLB misses of a larger heap), so the ratio of `move` can be read against it.
import { performance } from 'node:perf_hooks';
import type { ApplyContext, StateMachine } from '@baton/contracts/internal/metadata-consensus.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import type { OwnershipCommand, OwnershipState } from '@baton/authority-transfer/internal/ownership.js';
import type { StreamCommand } from '@baton/stream-transfer/internal/commands.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/stream-metadata.js';
import { percentile, sweepSizes, type ScaleRow } from './rows.js';

const NODES = 10;
const SAMPLES = Number(process.env.BENCH_APPLY_SAMPLES ?? 2_000);

/** Applies commands to one state, one log index each, timing those asked for. */
class Applier<S, C> {
  index = 0;
  /** Per label: the process CPU time (µs) and the wall time (µs) of each timed command. */
  readonly timings = new Map<string, { cpu: number[]; wall: number[] }>();

  constructor(
    readonly machine: StateMachine<S, C, any>,
    public state: S,
  ) {}

  apply(command: C): { ok: boolean; started?: string[] } {
    this.index += 1;
    return this.machine.apply(this.state, command, this.ctx()) as { ok: boolean };
  }

  /** Applies and records the time under `label` (µs). */
  timed(label: string, command: C): { ok: boolean; started?: string[] } {
    const cpu = process.cpuUsage();
    const t = performance.now();
    const result = this.apply(command);
    const wall = (performance.now() - t) * 1000;
    const used = process.cpuUsage(cpu);
    if (!result.ok) throw new Error(`${label}: the command was refused: ${JSON.stringify(result)}`);
    let list = this.timings.get(label);
    if (!list) this.timings.set(label, (list = { cpu: [], wall: [] }));
    list.cpu.push(used.user + used.system);
    list.wall.push(wall);
    return result;
  }

  ctx(): ApplyContext {
    return { position: { term: 1, index: this.index }, voters: ['m1', 'm2', 'm3'] };
  }
}

function streamsOf(n: number): Applier<StreamMetadata, StreamCommand> {
  const machine = new StreamStateMachine();
  const a = new Applier<StreamMetadata, StreamCommand>(machine, machine.initial());
  // Room for the streams, the samples and a drain node's worth more.
  for (let i = 0; i < NODES; i++) a.apply({ type: 'register-node', node: `node-${i}`, address: `http://10.0.0.${i}:8080`, slots: n + 10 * SAMPLES });
  for (let i = 0; i < n; i++) a.apply({ type: 'create-stream', stream: `stream-${i}` });
  return a;
}

/** Closes and completes the pending transfer of `stream`, timing both. */
function settle(a: Applier<StreamMetadata, StreamCommand>, stream: string, completeLabel: string) {
  const pending = a.state.transfer(stream)!;
  const record = a.state.stream(stream)!;
  a.timed('close', { type: 'close', stream, node: pending.source, epoch: record.epoch, tail: record.tail, producers: record.producers });
  return a.timed(completeLabel, { type: 'complete', stream, source: pending.source, target: pending.target, epoch: record.epoch });
}

function measureStreams(n: number): Map<string, { cpu: number[]; wall: number[] }> {
  const a = streamsOf(n);
  const stride = Math.max(1, Math.floor(n / SAMPLES));
  for (let i = 0; i < SAMPLES; i++) a.timed('create', { type: 'create-stream', stream: `new-${i}` });
  for (let i = 0; i < SAMPLES; i++) {
    const stream = `stream-${(i * stride) % n}`;
    const owner = a.state.stream(stream)!.owner;
    const target = `node-${(Number(owner.slice(5)) + 1) % NODES}`;
    a.timed('transfer', { type: 'transfer', stream, target });
    settle(a, stream, 'complete');
  }
  // A drain node owning SAMPLES streams; each complete of one of its moves starts the next.
  a.apply({ type: 'register-node', node: 'drained', address: 'http://10.0.1.1:8080', slots: SAMPLES });
  for (let i = 0; i < SAMPLES; i++) a.apply({ type: 'create-stream', stream: `drained-${i}`, node: 'drained' });
  const first = a.timed('drain', { type: 'drain', node: 'drained', maxInFlight: 4 });
  const moving = [...(first.started ?? [])];
  while (moving.length > 0) {
    const stream = moving.shift()!;
    const result = settle(a, stream, 'drain step');
    moving.push(...(result.started ?? []));
  }
  if (a.state.ownedCount('drained') !== 0) throw new Error(`the drain left ${a.state.ownedCount('drained')} streams`);
  a.timed('undrain', { type: 'undrain', node: 'drained' });
  return a.timings;
}

function authoritiesOf(n: number): Applier<OwnershipState, OwnershipCommand> {
  const machine = new OwnershipStateMachine();
  const a = new Applier<OwnershipState, OwnershipCommand>(machine, machine.initial());
  for (let i = 0; i < n; i++) a.apply({ type: 'transfer_authority', authority: `authority-${i}`, target: `dc-${i % 3}` });
  return a;
}

/** A state machine of a plain Map doing what `move` does, nothing else (see the baseline above). */
const mapBaseline = {
  initial: () => new Map<string, { home: string; epoch: number }>(),
  apply(state: Map<string, { home: string; epoch: number }>, c: { authority: string; target: string }) {
    const current = state.get(c.authority);
    const epoch = (current?.epoch ?? 0) + 1;
    state.set(c.authority, { home: c.target, epoch });
    return { ok: true, authority: c.authority, source: current?.home, home: c.target, epoch };
  },
} as unknown as StateMachine<Map<string, { home: string; epoch: number }>, { authority: string; target: string }, unknown>;

function measureMapBaseline(n: number): Map<string, { cpu: number[]; wall: number[] }> {
  const a = new Applier(mapBaseline, mapBaseline.initial());
  for (let i = 0; i < n; i++) a.apply({ authority: `authority-${i}`, target: `dc-${i % 3}` });
  const stride = Math.max(1, Math.floor(n / SAMPLES));
  for (let i = 0; i < SAMPLES; i++) {
    const authority = `authority-${(i * stride) % n}`;
    const home = a.state.get(authority)!.home;
    a.timed('move', { authority, target: home === 'dc-0' ? 'dc-1' : 'dc-0' });
  }
  return a.timings;
}

function measureAuthorities(n: number): Map<string, { cpu: number[]; wall: number[] }> {
  const a = authoritiesOf(n);
  const stride = Math.max(1, Math.floor(n / SAMPLES));
  for (let i = 0; i < SAMPLES; i++) a.timed('establish', { type: 'transfer_authority', authority: `new-${i}`, target: 'dc-0' });
  for (let i = 0; i < SAMPLES; i++) {
    const authority = `authority-${(i * stride) % n}`;
    const home = a.state.authorities.get(authority)!.home;
    a.timed('move', { type: 'transfer_authority', authority, target: home === 'dc-0' ? 'dc-1' : 'dc-0' });
  }
  for (let i = 0; i < SAMPLES; i++) {
    const authority = `authority-${(i * stride + 1) % n}`;
    const source = a.state.authorities.get(authority)!.home;
    const id = `t-${i}`;
    const member = `${source}-1`;
    a.timed('register', {
      type: 'register_transfer',
      id,
      authority,
      source,
      target: source === 'dc-0' ? 'dc-1' : 'dc-0',
      actor: 'bench',
      reason: 'drain',
      driver: 'm1',
      sources: [{ member, incarnation: 'i1', serial: 10 }],
      deadline: 1e15,
    });
    a.timed('freeze', { type: 'freeze_transfer', id, authority, thawBy: 1e15 });
    a.timed('record_final', { type: 'record_final', id, authority, member, incarnation: 'i1', serial: 12, freeze: 1 });
    const intent = a.state.transfers.get(authority)!;
    a.timed('commit', { type: 'commit_planned_transfer', id, authority, source, target: intent.target, actor: 'bench', reason: 'drain', barrier: 12 });
    for (const m of ['m1', 'm2', 'm3']) a.timed('ack_audit', { type: 'ack_audit', ids: [id], member: m });
  }
  return a.timings;
}

/**
 * p50/p99 of the CPU time (what the command costs; the process being descheduled on a shared
 * machine does not count, a garbage collection meanwhile does) and of the wall time.
 */
function rowsOf(subject: string, n: number, timings: Map<string, { cpu: number[]; wall: number[] }>): ScaleRow[] {
  return [...timings].map(([command, list]) => {
    const cpu = [...list.cpu].sort((x, y) => x - y);
    const wall = [...list.wall].sort((x, y) => x - y);
    return {
      part: 'apply',
      name: `${subject} ${command} @${n.toLocaleString('en-US')}`,
      subject,
      command,
      records: n,
      samples: cpu.length,
      p50Us: Number(percentile(cpu, 50).toFixed(1)),
      p99Us: Number(percentile(cpu, 99).toFixed(1)),
      wallP50Us: Number(percentile(wall, 50).toFixed(2)),
      wallP99Us: Number(percentile(wall, 99).toFixed(1)),
    };
  });
}

/** Heap per record: a state of n records against an empty one, after a full collection. */
function bytesPerRecord(build: (n: number) => unknown, n: number): number {
  const heap = () => {
    (globalThis as { gc?: () => void }).gc?.();
    return process.memoryUsage().heapUsed;
  };
  const base = heap();
  const kept = build(n);
  const used = heap() - base;
  if (!kept) throw new Error('unreachable');
  return Math.round(used / n);
}

export async function run(): Promise<ScaleRow[]> {
  const rows: ScaleRow[] = [];
  const sizes = sweepSizes();
  // A warm-up at the smallest size, discarded: the first figures would otherwise include compiling.
  measureStreams(sizes[0]);
  measureAuthorities(sizes[0]);
  measureMapBaseline(sizes[0]);
  for (const [subject, measure] of [
    ['streams', measureStreams],
    ['authorities', measureAuthorities],
    ['baseline map', measureMapBaseline],
  ] as const) {
    const bySize = new Map<number, ScaleRow[]>();
    for (const n of sizes) {
      const r = rowsOf(subject, n, measure(n));
      bySize.set(n, r);
      rows.push(...r);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // The goal's figure: each command's p50 (and p99) at the largest size over the smallest.
    const small = bySize.get(sizes[0])!;
    const large = bySize.get(sizes[sizes.length - 1])!;
    for (const l of large) {
      const s = small.find((x) => x.command === l.command)!;
      rows.push({
        part: 'apply',
        name: `${subject} ${l.command} ${sizes[sizes.length - 1].toLocaleString('en-US')} / ${sizes[0].toLocaleString('en-US')}`,
        subject,
        command: l.command as string,
        // The median's CPU time is whole microseconds (too coarse at 1–10 µs): its wall time is
        // used (rarely descheduled); the p99's CPU time (the wall p99 is mostly descheduling).
        p50Ratio: Number(((l.wallP50Us as number) / (s.wallP50Us as number)).toFixed(2)),
        p99Ratio: Number(((l.p99Us as number) / (s.p99Us as number)).toFixed(2)),
      });
    }
  }
  const n = sizes[sizes.length - 1];
  rows.push(
    { part: 'apply', name: `heap per stream @${n.toLocaleString('en-US')}`, records: n, bytesPerRecord: bytesPerRecord((k) => streamsOf(k).state, n) },
    { part: 'apply', name: `heap per authority @${n.toLocaleString('en-US')}`, records: n, bytesPerRecord: bytesPerRecord((k) => authoritiesOf(k).state, n) },
  );
  return rows;
}
