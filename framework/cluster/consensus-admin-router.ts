import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import {
  canExportSnapshot,
  canListMembers,
  canMoveLeader,
  LeaderMoveFailedError,
  type MembershipDetails,
  type MetadataConsensus,
  type OptionalConsensusCapability,
  type MemberId,
} from '@baton/contracts';
import {
  requireScope,
  readValidBody,
  type ApiDocument,
  type OperationSpec,
  route,
  HttpProblem,
  problems,
  validate,
} from '@baton/http';
import {
  consensusProblemExtensions,
  examples,
  leaderMovedSchema,
  membershipDetailsSchema,
  voterAddedSchema,
  voterRemovedSchema,
} from './consensus-admin-schemas.js';
import { encodeBackup, type BackupVariant } from './snapshot-file.js';

const memberId = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z0-9._-]+$/, 'a member id is letters, digits, ".", "_" and "-"');

export const addMemberBody = z
  .object({
    id: memberId,
    /** Where the other members reach it (its peer listener). */
    address: z.url({ protocol: /^https?$/, error: 'address must be an http(s) URL of the member\'s peer listener' }).optional(),
  })
  .strict();
export const moveLeaderBody = z.object({ member: memberId }).strict();
export const memberParam = z.object({ member: memberId });

export interface ConsensusAdminOptions {
  /** The variant's admin prefix: `/v1/admin` (stream nodes), `/availability/v1` (authority members); routes go under `<prefix>/consensus`. */
  prefix: string;
  readScope: string;
  writeScope: string;
  tags: string[];
  variant: BackupVariant;
  self: MemberId;
  /** Why a capability is missing, named in the 501 (e.g. the consensus plugin in use). */
  consensusName: string;
  /** Problem statuses every route of this API may also answer (401/403 are added by the scope). */
  problemsOf?: Record<number, string>;
}

function notImplemented(what: string, consensus: MetadataConsensus<any, any, any>, capability: OptionalConsensusCapability, name: string): HttpProblem {
  const why = consensus.capabilityGaps?.[capability] ?? `it does not offer the optional ${capability} operation`;
  return new HttpProblem({
    status: 501,
    type: 'not-implemented',
    detail: `${what} is not possible with this cluster's metadata consensus (${name}): ${why}`,
    extra: { consensus: name, capability },
  });
}

/** A majority of `n` voters. */
const majority = (n: number) => Math.floor(n / 2) + 1;

/**
 * Membership, leadership and backups of the metadata consensus, for both variants: the voters
 * (with the leader's view of how far each has come), adding and removing one voter at a time,
 * moving the leader, and a consistent snapshot. A capability the consensus lacks answers 501.
 * A removal that would leave fewer live voters than a majority of the rest is refused (409),
 * so an operator cannot take the metadata offline by mistake.
 */
export function consensusAdminRouter(
  consensus: MetadataConsensus<any, any, any>,
  document: ApiDocument,
  options: ConsensusAdminOptions,
): Router {
  const router = new Router({ prefix: `${options.prefix}/consensus` });
  document.problemExtensions(consensusProblemExtensions);
  const extra = options.problemsOf ?? {};
  const unavailable = { 503: 'The consensus cannot answer now (no leader, no quorum in time); see Retry-After' };
  const scoped = (spec: Omit<OperationSpec, 'tags'> & { scope: string }, handler: Middleware<any, any>) =>
    route(router, document, { ...spec, tags: options.tags }, requireScope(spec.scope), handler);
  const details = async (): Promise<MembershipDetails> => {
    if (canListMembers(consensus)) return consensus.members();
    const leadership = consensus.leadership();
    return {
      term: leadership.term,
      ...(leadership.leader ? { leader: leadership.leader } : {}),
      from: options.self,
      voters: consensus.membership().voters.map((id) => ({ id, leader: id === leadership.leader })),
    };
  };

  scoped(
    {
      method: 'get',
      path: '/members',
      summary: 'The consensus voters: addresses, the leader, match and applied indexes where known',
      operationId: 'listConsensusMembers',
      description: 'Match indexes and liveness come from the leader (asked by a follower); `from` names who answered.',
      scope: options.readScope,
      responses: {
        200: { description: 'The voters, as the leader (or, without one, this member) sees them', schema: membershipDetailsSchema, example: examples.members },
        ...extra,
        ...unavailable,
      },
    },
    async (ctx) => {
      ctx.body = await details();
    },
  );

  scoped(
    {
      method: 'post',
      path: '/members',
      summary: 'Add a voter (one change at a time); adding a present voter changes nothing',
      operationId: 'addConsensusMember',
      description:
        'The new member must be started with the current voters as its bootstrap voters and a peer credential the others accept. ' +
        '`address` is where the others reach it; the voters reachable now learn it.',
      scope: options.writeScope,
      requestBody: addMemberBody,
      requestExample: examples.add,
      responses: {
        200: { description: 'Already a voter: nothing changed', schema: voterAddedSchema, example: { ...examples.added, added: false } },
        201: { description: 'Added; the voters in the body', schema: voterAddedSchema, example: examples.added },
        409: 'Another membership change is in progress',
        ...extra,
        ...unavailable,
      },
    },
    async (ctx) => {
      const body = await readValidBody(ctx, addMemberBody);
      const before = consensus.membership().voters;
      if (before.includes(body.id)) {
        ctx.status = 200;
        ctx.body = { member: body.id, added: false, voters: before };
        return;
      }
      await membershipChange(() => consensus.addVoter(body.id, body.address ? { address: body.address } : {}));
      ctx.status = 201;
      // Committed, if perhaps not applied here yet: the configuration now in force.
      ctx.body = { member: body.id, added: true, voters: [...before, body.id].sort() };
    },
  );

  scoped(
    {
      method: 'delete',
      path: '/members/{member}',
      summary: 'Remove a voter, unless the live voters left would be fewer than a majority',
      operationId: 'removeConsensusMember',
      scope: options.writeScope,
      params: { path: memberParam },
      responses: {
        200: { description: 'Removed; the voters in the body', schema: voterRemovedSchema, example: examples.removed },
        404: 'Not a voter',
        409: 'The removal would lose the quorum, or another membership change is in progress',
        ...extra,
        ...unavailable,
      },
    },
    async (ctx) => {
      const { member } = validate(memberParam, ctx.params, 'path');
      const now = await details();
      if (!now.voters.some((v) => v.id === member))
        throw problems.notFound(`${member} is not a voter (voters: ${now.voters.map((v) => v.id).join(', ')})`, { member });
      const rest = now.voters.filter((v) => v.id !== member);
      // A consensus without member details (etcd's) keeps its quorum in the engine: only the last voter is guarded.
      if (canListMembers(consensus) && now.voters.every((v) => v.live === undefined))
        throw problems.unavailable('no leader answered with the voters\' liveness, so the removal cannot be checked against the quorum; retry once a leader is elected');
      const live = canListMembers(consensus) ? rest.filter((v) => v.live).map((v) => v.id) : rest.map((v) => v.id);
      if (rest.length === 0 || live.length < majority(rest.length)) {
        throw new HttpProblem({
          status: 409,
          type: 'would-lose-quorum',
          detail:
            `removing ${member} would leave ${live.length} live of ${rest.length} voters (${live.join(', ') || 'none'}), fewer than the ` +
            `majority of ${majority(rest.length)} the consensus needs: bring the down voters back first`,
          extra: { member, live, voters: rest.map((v) => v.id) },
        });
      }
      // The voters this was checked against: if another change lands first, the consensus
      // refuses this one (409) rather than apply it to voters nobody checked.
      await membershipChange(() => consensus.removeVoter(member, { expectedVoters: now.voters.map((v) => v.id) }));
      ctx.body = { member, removed: true, voters: rest.map((v) => v.id).sort() };
    },
  );

  scoped(
    {
      method: 'post',
      path: '/leader',
      summary: 'Move the leadership to the named voter (Raft TimeoutNow once it caught up)',
      operationId: 'moveConsensusLeader',
      description: 'Answers once the member answering sees the named voter lead.',
      scope: options.writeScope,
      requestBody: moveLeaderBody,
      requestExample: examples.move,
      responses: {
        200: { description: 'The named member leads', schema: leaderMovedSchema, example: examples.moved },
        404: 'Not a voter',
        501: 'The consensus cannot move its leader',
        ...extra,
        ...unavailable,
      },
    },
    async (ctx) => {
      const body = await readValidBody(ctx, moveLeaderBody);
      if (!canMoveLeader(consensus)) throw notImplemented('moving the leader', consensus, 'moveLeader', options.consensusName);
      if (!consensus.membership().voters.includes(body.member))
        throw problems.notFound(`${body.member} is not a voter (voters: ${consensus.membership().voters.join(', ')})`, { member: body.member });
      const before = consensus.leadership().leader;
      try {
        const leadership = await consensus.moveLeader(body.member);
        ctx.body = { leader: leadership.leader, term: leadership.term, moved: before !== body.member };
      } catch (error) {
        if (error instanceof LeaderMoveFailedError) throw problems.unavailable(error.message, { retryAfterSeconds: 1, extra: { member: body.member } });
        throw error;
      }
    },
  );

  scoped(
    {
      method: 'get',
      path: '/snapshot',
      summary: 'A consistent snapshot of the metadata (backup), as NDJSON: a header line with index, term, variant and sha256, then the pieces',
      operationId: 'exportConsensusSnapshot',
      description: 'Taken at the index this member applied after a linearizable read. `baton snapshot restore` seeds a new member\'s storage with it.',
      scope: options.readScope,
      responses: {
        200: {
          description: 'The backup',
          contentType: 'application/x-ndjson',
          schema: z.string().describe('NDJSON: the header line, then one line per snapshot piece'),
          headers: {
            'X-Baton-Snapshot-Index': { description: 'The log index the snapshot was taken at' },
            'X-Baton-Snapshot-Sha256': { description: 'sha256 (hex) of every byte after the header line' },
          },
          example: examples.snapshot,
        },
        501: 'The consensus cannot export a snapshot',
        ...extra,
        ...unavailable,
      },
    },
    async (ctx) => {
      if (!canExportSnapshot(consensus)) throw notImplemented('exporting a snapshot', consensus, 'exportSnapshot', options.consensusName);
      const snapshot = await consensus.exportSnapshot();
      const { header, lines } = encodeBackup(snapshot, options.variant, options.self);
      ctx.type = 'application/x-ndjson';
      ctx.set('Cache-Control', 'no-store');
      ctx.set('X-Baton-Snapshot-Index', String(header.index));
      ctx.set('X-Baton-Snapshot-Sha256', header.sha256);
      ctx.body = Readable.from(lines);
    },
  );

  return router;
}

/** A membership change the consensus refused outright (another in progress) is a 409; the rest propagates. */
async function membershipChange(change: () => Promise<void>): Promise<void> {
  try {
    await change();
  } catch (error) {
    const reason = (error as { reason?: unknown }).reason;
    if (reason === 'membership_change_in_progress' || reason === 'membership_changed')
      throw problems.conflict((error as Error).message, { reason });
    throw error;
  }
}
