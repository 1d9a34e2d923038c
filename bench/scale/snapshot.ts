// Part "snapshot": at N streams (and N authorities), what a snapshot costs the member's event
// loop. The replicated state (the variant's state machine plus a full idempotency window) is
// built by applying commands; then
//   capture        the synchronous part of taking a snapshot (ReplicatedState.capture);
//   write          the file storage writing it (background, awaited appends): total time and the
//                  longest the event loop could not run a 1 ms timer meanwhile (CPU time beside it,
//                  and the longest garbage collection pause, to tell the collector from the work);
//   install        a follower taking it piece by piece, each piece through JSON as off the wire
//                  and one piece per event-loop turn as chunks arrive: longest block, total time;
//   whole          for comparison, the state machine's whole snapshot() plus JSON.stringify of it
//                  in one go (what every snapshot cost before pieces).
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { StateMachine } from '@baton/contracts/internal/metadata-consensus.js';
import { canonicalJson } from '@baton/consensus/internal/canonical-json.js';
import { DirectoryFiles } from '@baton/kernel/internal/byte-files.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import type { Entry } from '@baton/plugin-raft/internal/core/types.js';
import { ReplicatedState } from '@baton/plugin-raft/internal/driver/replicated-state.js';
import { FileRaftStorage } from '@baton/plugin-raft/internal/storage/file-storage.js';
import { heapMb, largestSize, longestBlockMs, type ScaleRow } from './rows.js';

const WINDOW = 10_000;
const NODES = 10;

interface Subject {
  name: string;
  machine: StateMachine<any, any, any>;
  /** The commands that build a state of `n` records, in order. */
  commands(n: number): Iterable<unknown>;
}

const subjects: Subject[] = [
  {
    name: 'streams',
    machine: new StreamStateMachine(),
    *commands(n) {
      for (let i = 0; i < NODES; i++) yield { type: 'register-node', node: `node-${i}`, address: `http://10.0.0.${i}:8080`, slots: n };
      for (let i = 0; i < n; i++) yield { type: 'create-stream', stream: `stream-${i}` };
    },
  },
  {
    name: 'authorities',
    machine: new OwnershipStateMachine(),
    *commands(n) {
      for (let i = 0; i < n; i++) yield { type: 'transfer_authority', authority: `authority-${i}`, target: `dc-${i % 3}` };
    },
  },
];

function build(subject: Subject, n: number): ReplicatedState<any, any, any> {
  const rs = new ReplicatedState(subject.machine, WINDOW, ['n1', 'n2', 'n3']);
  let index = 0;
  const total = (subject.name === 'streams' ? NODES : 0) + n;
  for (const c of subject.commands(n)) {
    index++;
    // The last WINDOW commands carry idempotency keys, so the window is full.
    const keyed = index > total - WINDOW;
    const entry: Entry = { term: 1, index, type: 'normal', data: keyed ? { c, k: `key-${index}`, f: canonicalJson(c) } : { c } };
    rs.apply(entry);
  }
  return rs;
}

async function measure(subject: Subject, n: number): Promise<ScaleRow> {
  const rs = build(subject, n);
  const heap = heapMb();
  // heapMb forced a full collection of everything the build dropped; the collector sweeps those
  // pages on background threads for a while after it, and a loop that allocates meanwhile waits
  // for them (28–52 ms blocks on two cores, with no GC pause over 5 ms). An idle second lets that
  // finish, so what follows measures the snapshot, not the bench's own collection.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const meta = { index: rs.applied.index, term: 1, voters: rs.voters };

  let t = performance.now();
  const image = rs.capture();
  const captureMs = performance.now() - t;

  const dir = await mkdtemp(join(tmpdir(), 'baton-bench-snapshot-'));
  try {
    const storage = new FileRaftStorage(new DirectoryFiles(dir));
    await storage.load();
    t = performance.now();
    const write = await longestBlockMs(() => storage.writeSnapshot({ meta, data: image }));
    const writeS = (performance.now() - t) / 1000;
    const name = `snap-${String(meta.index).padStart(16, '0')}.snap`;
    const bytes = (await stat(join(dir, name))).size;
    await storage.close();

    let pieces = 0;
    t = performance.now();
    const install = await longestBlockMs(async () => {
      const assembly = rs.assembly();
      for (const piece of image.pieces()) {
        assembly.add(JSON.parse(JSON.stringify(piece)));
        pieces++;
        // One chunk per message: the next arrives on a later turn of the event loop.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const finishStarted = performance.now();
      const assembled = assembly.finish();
      return { assembled, finishMs: performance.now() - finishStarted };
    });
    const installS = (performance.now() - t) / 1000;

    t = performance.now();
    const wholeBytes = JSON.stringify(subject.machine.snapshot(rs.state)).length;
    const wholeMs = performance.now() - t;

    return {
      part: 'snapshot',
      name: `${subject.name} ${n.toLocaleString('en-US')}`,
      records: n,
      heapMb: heap,
      pieces,
      snapshotMb: Number((bytes / 1e6).toFixed(1)),
      captureMs: Number(captureMs.toFixed(2)),
      writeS: Number(writeS.toFixed(2)),
      writeLongestBlockMs: Number(write.longestBlockMs.toFixed(1)),
      writeLongestCpuBlockMs: Number(write.longestCpuBlockMs.toFixed(1)),
      writeLongestGcMs: Number(write.longestGcMs.toFixed(1)),
      installS: Number(installS.toFixed(2)),
      installLongestBlockMs: Number(install.longestBlockMs.toFixed(1)),
      installLongestCpuBlockMs: Number(install.longestCpuBlockMs.toFixed(1)),
      installLongestGcMs: Number(install.longestGcMs.toFixed(1)),
      installFinishMs: Number(install.value.finishMs.toFixed(1)),
      wholeSnapshotMs: Number(wholeMs.toFixed(0)),
      wholeSnapshotMb: Number((wholeBytes / 1e6).toFixed(1)),
      capture: subject.machine.capture ? 'pieces' : 'whole (no capture)',
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<ScaleRow[]> {
  const n = largestSize();
  const rows: ScaleRow[] = [];
  // BENCH_SNAPSHOT_SUBJECTS=authorities measures one state alone: run after the other, a
  // subject's write also pays for collecting the garbage the other left (scavenges of several
  // ms each on the heap that just shed it), which is not its own work.
  const asked = (process.env.BENCH_SNAPSHOT_SUBJECTS ?? subjects.map((s) => s.name).join(',')).split(',');
  for (const subject of subjects.filter((s) => asked.includes(s.name))) rows.push(await measure(subject, n));
  return rows;
}
