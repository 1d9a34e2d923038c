import { access } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { lockDirectory, type DirectoryLock } from '@baton/kernel';
import { repairWal, type WalRepairReport, type WalEntry } from '@baton/stream-transfer';
import { repairRaftLog, type RaftRepairReport } from '@baton/plugin-raft';
import { FailedError } from '../cli-errors.js';
import { outputFor, type CliContext } from '../context.js';

/** Dropped entries listed one per line; the rest are counted (all are in --json). */
const LISTED = 20;

/**
 * `baton repair wal|raft DIR`: the explicit step after a node refused to start on a damaged
 * stream WAL or Raft log. Keeps the damaged files aside, cuts at the last intact record, and
 * says what it dropped. A node never does this by itself: dropping acknowledged records is an
 * operator's decision.
 */
export function registerRepair(program: Command, ctx: CliContext): void {
  const repair = program
    .command('repair')
    .description("repair a stopped node's damaged stream WAL or Raft log: keeps the damaged files aside, cuts at the last intact record")
    .addHelpText(
      'after',
      `
A node that finds a damaged record in its WAL or Raft log (a checksum that does not match,
with more records after it: not the torn tail a crash leaves, which is cut by itself) refuses
to start and names the file, the byte and the command to run. Stop the node first; the repair
refuses while a live process holds the directory's node.lock. Nothing is deleted: the damaged
files are kept under DIR/damaged-<n>/. --dry-run says what would be done and changes nothing.

Examples:
  baton repair wal .baton/data/n2/wal
  baton repair raft .baton/data/n2/raft --dry-run`,
    );

  repair
    .command('wal')
    .description('cut a stream WAL at its first damaged entry (the entries after it are listed, then dropped)')
    .argument('<dir>', "the node's WAL directory (node.wal.dir in its config; <node dir>/wal under baton up)")
    .option('--dry-run', 'say what would be done and change nothing')
    .action(async (dir: string, options: { dryRun?: boolean }, command: Command) => {
      const output = outputFor(ctx, command);
      const path = resolve(ctx.cwd, dir);
      const report = await whileStopped(path, () => repairWal(path, { dryRun: options.dryRun === true }));
      output.result(report, describeWalRepair);
    });

  repair
    .command('raft')
    .description("cut a Raft member's log at its first damaged record; the member then catches up from the other voters")
    .argument('<dir>', "the member's Raft directory (the consensus dataDir; <node dir>/raft under baton up)")
    .option('--dry-run', 'say what would be done and change nothing')
    .action(async (dir: string, options: { dryRun?: boolean }, command: Command) => {
      const output = outputFor(ctx, command);
      const path = resolve(ctx.cwd, dir);
      const report = await whileStopped(path, () => repairRaftLog(path, { dryRun: options.dryRun === true }));
      output.result(report, describeRaftRepair);
    });
}

/**
 * Runs the repair holding the node's data-dir lock (`node.lock` in the directory or its
 * parent, where a host takes it), so the node cannot start, or be running, meanwhile.
 */
async function whileStopped<T>(dir: string, run: () => Promise<T>): Promise<T> {
  let lock: DirectoryLock | undefined;
  for (const candidate of [dir, dirname(dir)]) {
    if (!(await exists(join(candidate, 'node.lock')))) continue;
    try {
      lock = await lockDirectory(candidate, {
        file: 'node.lock',
        inUse: (d, pid) => `${d} belongs to a running node (pid ${pid} holds ${d}/node.lock): stop it, then run the repair again`,
      });
    } catch (error) {
      throw new FailedError('node-running', (error as Error).message, { cause: error });
    }
    break;
  }
  try {
    return await run();
  } finally {
    await lock?.release();
  }
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

function describeWalRepair(r: WalRepairReport): string[] {
  const torn = r.tornBytes > 0 ? `; its last ${r.tornBytes} bytes are a torn tail, which the node cuts itself when it opens the WAL` : '';
  if (!r.damage) return [`${r.file}: intact, ${count(r.kept.entries, 'entry', 'entries')}${torn}; nothing to repair`];
  const verb = r.outcome === 'would-repair' ? 'would repair' : 'repaired';
  const lines = [
    `${verb} ${r.file}: damaged at byte ${r.damage.offset} (${r.damage.reason})`,
    `  damaged file kept as ${r.keptAs}`,
    `  kept ${count(r.kept.entries, 'entry', 'entries')} (bytes 0-${r.kept.bytes - 1})`,
    `  dropped ${r.damage.droppedBytes} bytes: the damaged entry and ${count(r.damage.dropped.length, 'intact entry', 'intact entries')} after it${r.damage.dropped.length > 0 ? ':' : ''}`,
    ...r.damage.dropped.slice(0, LISTED).map((d) => `    byte ${d.offset}: ${describeEntry(d.entry)}`),
  ];
  if (r.damage.dropped.length > LISTED) lines.push(`    ... and ${r.damage.dropped.length - LISTED} more (--json lists them all)`);
  lines.push(
    '  Records dropped here that were not in the object store yet were never acknowledged (an append is acknowledged once',
    "  its segment is stored): their producers' retries send them again.",
    r.outcome === 'would-repair' ? '  Nothing was changed (--dry-run).' : '  Start the node again: it recovers from the kept entries.',
  );
  return lines;
}

function describeEntry(entry: WalEntry): string {
  const session = `stream ${entry.stream} epoch ${entry.epoch}`;
  switch (entry.t) {
    case 'open':
      return `open ${session} at offset ${entry.next}`;
    case 'records':
      return `records ${session}, offsets ${entry.first}-${entry.first + entry.bodies.length - 1} (${count(entry.bodies.length, 'record', 'records')})`;
    case 'flushed':
      return `flushed ${session} up to offset ${entry.upTo}`;
    case 'closed':
      return `closed ${session} at tail ${entry.tail}`;
    case 'settled':
      return `settled ${session}`;
  }
}

function describeRaftRepair(r: RaftRepairReport): string[] {
  if (r.repairs.length === 0) {
    return [`${r.dir}: intact (log up to index ${r.lastIndex}, term ${r.hardState?.term ?? 0}); nothing to repair`];
  }
  const lines: string[] = [];
  for (const step of r.repairs) {
    const p = step.problem;
    const where = p.offset === undefined ? p.file : `${p.file} at byte ${p.offset}`;
    lines.push(`${r.outcome === 'would-repair' ? 'would repair' : 'repaired'} ${r.dir}: ${where} (${p.reason})`);
    lines.push(`  kept aside under ${r.aside}: ${step.setAside.join(', ')}`);
    if (step.truncated) lines.push(`  cut ${step.truncated.file} to its first ${step.truncated.bytes} bytes, then the hard state`);
    else lines.push('  removed every segment and snapshot: the member starts from its hard state and gets a snapshot from the leader');
    const dropped = step.droppedEntries;
    lines.push(
      `  dropped ${count(dropped.length, 'intact entry', 'intact entries')}${dropped.length > 0 ? ` (${indexRanges(dropped.map((e) => e.index))})` : ''}` +
        ` and ${step.damagedBytes} damaged bytes`,
    );
  }
  const hs = r.hardState;
  if (hs) lines.push(`  hard state kept: term ${hs.term}, vote ${hs.vote === '' ? 'none' : hs.vote}, commit ${hs.commit}`);
  lines.push(`  the log now ends at index ${r.lastIndex}`);
  if (hs?.catchUpTo) {
    lines.push(
      `  When it starts, the member catches up from the other voters, and neither votes nor campaigns until a leader has matched`,
      `  its log up to index ${hs.catchUpTo}: it may have acknowledged entries it no longer holds. A member that is its cluster's`,
      '  only voter has nobody to catch up from: what was dropped is lost.',
    );
  }
  if (r.outcome === 'would-repair') lines.push('  Nothing was changed (--dry-run).');
  return lines;
}

/** `3-7, 9, 12-13`: indexes as runs. */
function indexRanges(indexes: number[]): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    runs.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return runs.length > 8 ? `${runs.slice(0, 8).join(', ')}, ...` : runs.join(', ');
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
