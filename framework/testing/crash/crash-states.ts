import { createHash } from 'node:crypto';
import type { SeededRng } from '@baton/conformance';
import { changesNames, describeOperation, ROOT_NODE, type RecordedOperation } from './recorded-operation.js';

/**
 * How a crash state treats what was not synced at the crash point: `lose-unsynced` keeps only
 * what the syncs made durable, `keep-everything` everything issued, `sampled` a random choice
 * (each unsynced name change kept or lost, each file's unsynced bytes cut at a random byte).
 */
export type CrashChoice = 'lose-unsynced' | 'keep-everything' | 'sampled';

/** What a directory tree looks like after a power cut: paths relative to the root, parents first. */
export interface CrashImage {
  directories: string[];
  /** A file's bytes, or the earlier path of the same file (a hard link). */
  files: { path: string; bytes: Uint8Array; sameAs?: string }[];
}

export interface CrashState {
  /** Operations 0 .. point-1 were issued before the power went. */
  point: number;
  image: CrashImage;
  /** The unsynced changes the crash lost or tore, for a failure message (described only when asked). */
  lost(): string[];
  /** Equal for two states with equal trees: the checker explores each tree once. */
  signature: string;
}

interface NameChange {
  /** Directory names (`<dir node>/<name>`) the operation sets. */
  writes: string[];
  /** Names it needs as they were (a link's source). */
  reads: string[];
  /** Directories whose fsync makes it durable. */
  syncedBy: number[];
  /** Earlier operations that must have survived for this one to have. */
  dependsOn: number[];
}

/**
 * The POSIX crash model of the harness, after ALICE (OSDI '14). File data: an fsync or
 * fdatasync makes the file's earlier writes durable; after a crash a file holds its durable
 * bytes, then a prefix of its later writes, the last possibly torn at any byte (or, as an
 * extending write on some file systems leaves it, zeros). Names: a create, mkdir, link,
 * rename, unlink or rmdir is durable once a directory it changed is fsynced (a rename is one
 * atomic change of two names); until then a crash keeps it or loses it, independently of the
 * changes of other names but never out of order with earlier changes of the same names (a
 * rename's source must still exist, a removed directory must have been empty). A file fsync
 * does not make its name durable. Nothing is assumed about the order in which different files
 * or directories reach the disk.
 */
export class CrashModel {
  private readonly changes = new Map<number, NameChange>();
  private readonly kinds = new Map<number, 'file' | 'dir'>([[ROOT_NODE, 'dir']]);
  /** Per node, the positions of its fsyncs and fdatasyncs, in order. */
  private readonly syncs = new Map<number, number[]>();
  /** Per file, its writes and truncations, in order. */
  private readonly writes = new Map<number, { index: number; op: DataChange }[]>();

  constructor(readonly operations: readonly RecordedOperation[]) {
    operations.forEach((op, index) => {
      if (op.kind === 'fsync' || op.kind === 'fdatasync') append(this.syncs, op.node, index);
      if (op.kind === 'write' || op.kind === 'truncate') append(this.writes, op.node, { index, op });
    });
    const lastWriter = new Map<string, number>();
    const namesIn = new Map<number, Set<string>>();
    operations.forEach((op, i) => {
      if (!changesNames(op)) return;
      let change: NameChange;
      if (op.kind === 'rename') {
        change = { writes: [key(op.fromParent, op.fromName), key(op.toParent, op.toName)], reads: [], syncedBy: [op.fromParent, op.toParent], dependsOn: [] };
      } else if (op.kind === 'link') {
        change = { writes: [key(op.toParent, op.toName)], reads: [key(op.fromParent, op.fromName)], syncedBy: [op.toParent], dependsOn: [] };
      } else {
        change = { writes: [key(op.parent, op.name)], reads: [], syncedBy: [op.parent], dependsOn: [] };
        if (op.kind === 'mkdir') this.kinds.set(op.node, 'dir');
        if (op.kind === 'create') this.kinds.set(op.node, 'file');
      }
      const before = new Set<number>();
      for (const name of [...change.reads, ...change.writes]) {
        const last = lastWriter.get(name);
        if (last !== undefined) before.add(last);
      }
      if (op.kind === 'rmdir') {
        for (const name of namesIn.get(op.node) ?? []) before.add(lastWriter.get(name)!);
      }
      change.dependsOn = [...before];
      for (const name of change.writes) {
        lastWriter.set(name, i);
        const dir = Number(name.slice(0, name.indexOf('/')));
        if (!namesIn.has(dir)) namesIn.set(dir, new Set());
        namesIn.get(dir)!.add(name);
      }
      this.changes.set(i, change);
    });
  }

  /** One state a power cut after `point` operations could leave, chosen as `choice` says. */
  state(point: number, choice: CrashChoice, rng?: SeededRng): CrashState {
    if (choice === 'sampled' && !rng) throw new Error('a sampled crash state needs an rng');
    const ops = this.operations.slice(0, point);
    const keepChance = rng?.next() ?? 0;
    const keep = (): boolean => (choice === 'keep-everything' ? true : choice === 'lose-unsynced' ? false : rng!.next() < keepChance);
    // What was lost, described only for a failure message: most states never need it.
    const lost: (() => string)[] = [];

    // Names: durable by a later fsync of a directory they changed, or because a durable change
    // depends on them; the rest kept or lost, never before what they depend on.
    const lastSyncs = new Map<number, number>();
    const lastSync = (node: number): number => {
      let last = lastSyncs.get(node);
      if (last !== undefined) return last;
      last = -1;
      for (const at of this.syncs.get(node) ?? []) {
        if (at >= point) break;
        last = at;
      }
      lastSyncs.set(node, last);
      return last;
    };
    const durable = new Set<number>();
    for (let i = point - 1; i >= 0; i--) {
      const change = this.changes.get(i);
      if (!change) continue;
      if (!durable.has(i) && change.syncedBy.some((dir) => lastSync(dir) > i)) durable.add(i);
      if (durable.has(i)) for (const d of change.dependsOn) durable.add(d);
    }
    const kept = new Set<number>();
    for (const [i, change] of this.changes) {
      if (i >= point) break;
      if (durable.has(i) || (change.dependsOn.every((d) => kept.has(d)) && keep())) kept.add(i);
      else lost.push(() => `lost: ${describeOperation(ops[i])}`);
    }

    // Directories and the names in them, as the kept changes left them.
    const entries = new Map<number, Map<string, number>>([[ROOT_NODE, new Map()]]);
    const dir = (node: number) => entries.get(node) ?? entries.set(node, new Map()).get(node)!;
    for (const i of kept) {
      const op = ops[i];
      switch (op.kind) {
        case 'mkdir':
        case 'create':
          dir(op.parent).set(op.name, op.node);
          break;
        case 'rename':
          dir(op.fromParent).delete(op.fromName);
          dir(op.toParent).set(op.toName, op.node);
          break;
        case 'link':
          dir(op.toParent).set(op.toName, op.node);
          break;
        case 'unlink':
        case 'rmdir':
          dir(op.parent).delete(op.name);
          break;
      }
    }

    // File bytes: the synced writes, then a prefix of the later ones, the last possibly torn.
    const contents = new Map<number, Uint8Array>();
    /** What decided each file's bytes (which writes, how torn): equal keys, equal bytes. */
    const contentKeys = new Map<Uint8Array, string>();
    const contentOf = (node: number): Uint8Array => {
      const cached = contents.get(node);
      if (cached) return cached;
      const list = (this.writes.get(node) ?? []).filter((w) => w.index < point);
      const syncedAt = lastSync(node);
      const synced = list.filter((w) => w.index < syncedAt).length;
      const cut = choice === 'keep-everything' ? list.length : choice === 'lose-unsynced' ? synced : synced + rng!.int(list.length - synced + 1);
      const steps: { op: DataChange; take?: number; zeros?: boolean }[] = list.slice(0, cut).map((w) => ({ op: w.op }));
      if (cut < list.length) {
        const next = list[cut].op;
        const path = next.path;
        if (choice === 'sampled' && next.kind === 'write') {
          const take = rng!.int(next.bytes.length + 1);
          const zeros = take > 0 && rng!.chance(0.25);
          steps.push({ op: next, take, zeros });
          lost.push(() => `torn: ${path} keeps ${cut - synced} of ${list.length - synced} unsynced writes, then ${take} of ${next.bytes.length} bytes${zeros ? ' as zeros' : ''}`);
        } else {
          lost.push(() => `torn: ${path} keeps ${cut - synced} of ${list.length - synced} unsynced writes`);
        }
      }
      const bytes = replayed(steps);
      const torn = steps.at(-1);
      contentKeys.set(bytes, `${node}:${steps.length}:${torn?.take ?? ''}${torn?.zeros ? 'z' : ''}`);
      contents.set(node, bytes);
      return bytes;
    };

    const image: CrashImage = { directories: [], files: [] };
    const seenFiles = new Map<number, string>();
    const walk = (node: number, prefix: string, depth: number) => {
      if (depth > 64) throw new Error('crash model: directories nest more than 64 deep (a rename loop?)');
      for (const [name, child] of [...(entries.get(node) ?? new Map<string, number>())].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const path = prefix === '' ? name : `${prefix}/${name}`;
        if (this.kinds.get(child) === 'dir') {
          image.directories.push(path);
          walk(child, path, depth + 1);
        } else if (seenFiles.has(child)) {
          image.files.push({ path, bytes: contentOf(child), sameAs: seenFiles.get(child) });
        } else {
          seenFiles.set(child, path);
          image.files.push({ path, bytes: contentOf(child) });
        }
      }
    };
    walk(ROOT_NODE, '', 0);
    return { point, image, lost: () => lost.map((describe) => describe()), signature: signatureOf(image, contentKeys) };
  }
}

type DataChange = Extract<RecordedOperation, { kind: 'write' | 'truncate' }>;

function append<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function key(dir: number, name: string): string {
  return `${dir}/${name}`;
}

/** A file's bytes after `steps`, in one buffer (the recorded bytes themselves, for a file written once). */
function replayed(steps: { op: DataChange; take?: number; zeros?: boolean }[]): Uint8Array {
  const [only] = steps;
  if (steps.length === 1 && only.op.kind === 'write' && only.op.offset === 0 && !only.zeros) return only.op.bytes.subarray(0, only.take);
  let capacity = 0;
  for (const { op, take } of steps) capacity = Math.max(capacity, op.kind === 'truncate' ? op.length : op.offset + (take ?? op.bytes.length));
  const buffer = new Uint8Array(capacity);
  let length = 0;
  for (const { op, take, zeros } of steps) {
    if (op.kind === 'truncate') {
      if (op.length < length) buffer.fill(0, op.length, length);
      length = op.length;
      continue;
    }
    const part = op.bytes.subarray(0, take ?? op.bytes.length);
    if (zeros) buffer.fill(0, op.offset, op.offset + part.length);
    else buffer.set(part, op.offset);
    length = Math.max(length, op.offset + part.length);
  }
  return buffer.subarray(0, length);
}

/** The tree's names and, for each file, what decided its bytes (hashing the bytes themselves costs more than the check saves). */
function signatureOf(image: CrashImage, contentKeys: Map<Uint8Array, string>): string {
  const lines = image.directories.map((d) => `d ${d}`);
  for (const f of image.files) lines.push(`f ${f.path} ${f.sameAs ?? ''} ${contentKeys.get(f.bytes)}`);
  return createHash('sha1').update(lines.join('\n')).digest('hex');
}
