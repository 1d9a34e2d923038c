import type { Command } from 'commander';
import type { BackupVariant } from '@baton/cluster';
import { UsageError } from '../cli-errors.js';
import { consensusApiOf, withConsensusOptions } from '../consensus/consensus-api.js';
import { restoreBackup } from '../consensus/restore-backup.js';
import { saveBackup } from '../consensus/save-backup.js';
import { outputFor, type CliContext } from '../context.js';
import { table } from '../table.js';

const VOTER_ID = /^[A-Za-z0-9._-]{1,256}$/;

function memberArgument(value: string): string {
  if (!VOTER_ID.test(value)) throw new UsageError(`${JSON.stringify(value)} is not a member id: letters, digits, ".", "_" and "-"`);
  return value;
}

const CONNECTION_HELP = `
Talks to a stream node's API (/v1/admin/consensus, scope admin) or an authority node's control listener
(/availability/v1/consensus, scopes admin:read and admin:write), found by asking --url unless --variant says.`;

/** `baton member list|add|remove` and `baton leader move`: the consensus voters, like etcdctl member and move-leader. */
export function registerMember(program: Command, ctx: CliContext): void {
  const member = program
    .command('member')
    .description('list, add and remove the voters of the metadata consensus (Raft), one change at a time');

  withConsensusOptions(member.command('list'))
    .description('list the voters: address, leader, match and applied index, liveness (as the leader sees them)')
    .addHelpText('after', `${CONNECTION_HELP}\n\nExamples:\n  baton member list\n  baton member list --url http://127.0.0.1:7601 -o json`)
    .action(async (_options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const api = await consensusApiOf(ctx, command);
      const body = await api.members();
      output.result(
        { variant: api.variant, ...body },
        (d) => {
          const dash = (v: unknown) => (v === undefined || v === null ? '-' : String(v));
          const rows = d.voters.map((v) => [
            v.id,
            v.leader ? 'leader' : 'follower',
            dash(v.address),
            dash(v.match),
            dash(v.applied),
            v.live === undefined ? 'unknown' : v.live ? 'live' : 'not heard',
          ]);
          return [
            `${d.variant} consensus, term ${d.term}, ${d.leader ? `leader ${d.leader}` : 'NO LEADER'} (answered by ${d.from})`,
            ...table(['MEMBER', 'ROLE', 'ADDRESS', 'MATCH', 'APPLIED', 'LIVENESS'], rows),
          ];
        },
      );
    });

  withConsensusOptions(member.command('add'))
    .description('add a voter: the member must already run with the current voters as its bootstrap voters')
    .argument('<member>', 'the new voter\'s member id', memberArgument)
    .requiredOption('--peer-url <url>', 'where the other members reach it (its public/peer listener)')
    .addHelpText(
      'after',
      `${CONNECTION_HELP}

The new member's peer credential must be accepted by the others (its digest in their
peerAuth.peers, or a certificate of the cluster CA). Adding a voter already present changes
nothing (exit 0).

Examples:
  baton member add n4 --peer-url http://127.0.0.1:7703`,
    )
    .action(async (id: string, options: { peerUrl: string }, command: Command) => {
      const output = outputFor(ctx, command);
      const api = await consensusApiOf(ctx, command);
      const body = await api.addMember({ id, address: options.peerUrl });
      output.result(body, (b) => `${b.added ? `added ${b.member}` : `${b.member} was already a voter`}; voters: ${b.voters.join(', ')}`);
    });

  withConsensusOptions(member.command('remove'))
    .description('remove a voter (refused when the live voters left would be fewer than a majority)')
    .argument('<member>', 'the voter to remove', memberArgument)
    .addHelpText('after', `${CONNECTION_HELP}\n\nExamples:\n  baton member remove n4`)
    .action(async (id: string, _options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const api = await consensusApiOf(ctx, command);
      const body = await api.removeMember(id);
      output.result(body, (b) => `removed ${b.member}; voters: ${b.voters.join(', ')}`);
    });

  const leader = program.command('leader').description('the leader of the metadata consensus');
  withConsensusOptions(leader.command('move'))
    .description('make the named voter the leader (Raft TimeoutNow once it has caught up)')
    .argument('<member>', 'the voter to lead', memberArgument)
    .addHelpText('after', `${CONNECTION_HELP}\n\nExamples:\n  baton leader move n2`)
    .action(async (id: string, _options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const api = await consensusApiOf(ctx, command);
      const body = await api.moveLeader(id);
      output.result(body, (b) => (b.moved ? `${b.leader} leads now (term ${b.term})` : `${b.leader} already led (term ${b.term})`));
    });

  registerSnapshot(program, ctx);
}

function registerSnapshot(program: Command, ctx: CliContext): void {
  const snapshot = program.command('snapshot').description('back up the metadata and seed a new cluster from a backup');

  withConsensusOptions(snapshot.command('save'))
    .description('save a consistent snapshot of the metadata (index, term, variant, sha256) to FILE, written 0600')
    .argument('<file>', 'where to write the backup (streamed to a temporary file, put in place once it checks)')
    .addHelpText(
      'after',
      `${CONNECTION_HELP}

The member answering takes the replicated state at the index it applied after a linearizable
read, so the backup holds every change acknowledged before the command started.

Examples:
  baton snapshot save backup.ndjson`,
    )
    .action(async (file: string, _options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const api = await consensusApiOf(ctx, command);
      const response = await api.snapshot();
      const { header, bytes } = await saveBackup(file, response, api.url);
      const result = {
        file,
        variant: header.variant,
        index: header.index,
        term: header.term,
        voters: header.voters,
        bytes,
        sha256: header.sha256,
        takenBy: header.takenBy,
      };
      output.result(result, (r) => [
        `saved ${r.variant} metadata at index ${r.index} (term ${r.term}, taken by ${r.takenBy}) to ${r.file}: ${r.bytes} bytes`,
        `voters ${r.voters.join(', ')}; content sha256 ${r.sha256}`,
      ]);
    });

  snapshot
    .command('restore')
    .description("verify a backup and seed a fresh member's Raft storage with it")
    .argument('<file>', 'a backup written by "baton snapshot save"')
    .requiredOption('--data-dir <dir>', "the new member's data dir (must be empty or absent); the Raft storage goes to <dir>/raft")
    .option('--variant <variant>', 'refuse a backup of another variant: stream or authority')
    .option('--voters <ids>', "the new cluster's voters, comma-separated (default: the backup's)")
    .addHelpText(
      'after',
      `
Restore the same backup into the data dir of every member of the new cluster, then start them
(with the voters as their bootstrap voters). Every stream or authority of the backup is there.

Examples:
  baton snapshot restore backup.ndjson --data-dir ./restored/n1`,
    )
    .action(async (file: string, options: { dataDir: string; variant?: string; voters?: string }, command: Command) => {
      const output = outputFor(ctx, command);
      const variant = variantOption(options.variant);
      const voters = options.voters?.split(',').map((v) => v.trim()).filter((v) => v !== '');
      if (voters) for (const v of voters) memberArgument(v);
      const restored = await restoreBackup(file, options.dataDir, { ...(variant ? { variant } : {}), ...(voters ? { voters } : {}) });
      const result = {
        file,
        variant: restored.header.variant,
        index: restored.header.index,
        term: restored.header.term,
        voters: restored.voters,
        dataDir: restored.dataDir,
        raftDir: restored.raftDir,
      };
      output.result(result, (r) => [
        `restored ${r.variant} metadata at index ${r.index} (term ${r.term}) into ${r.raftDir}`,
        `voters ${r.voters.join(', ')}: start each with this data dir and these bootstrap voters`,
      ]);
    });
}

function variantOption(given: string | undefined): BackupVariant | undefined {
  if (given === undefined) return undefined;
  if (given === 'stream' || given === 'stream-transfer') return 'stream-transfer';
  if (given === 'authority' || given === 'authority-transfer') return 'authority-transfer';
  throw new UsageError(`--variant ${JSON.stringify(given)}: give stream or authority`);
}
