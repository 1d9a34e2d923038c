import { z } from 'zod';

// The one picture of a cluster, as both variants serve it (GET .../cluster) and as
// `baton status` and the dashboard read it. Each member reports its own facts
// (memberReportSchema); the member asked for the picture adds what it sees of the others.

const index = z.number().int().min(0);

export const notReadySchema = z.object({
  reason: z.enum(['no_leader', 'catching_up', 'stopped']),
  detail: z.string(),
});

export const eventLoopDelaySchema = z
  .object({
    p99Ms: z.number().min(0).describe('99th percentile of the last complete 10 s window'),
    maxMs: z.number().min(0).describe('Longest delay of that window and the current one'),
  })
  .describe('How late the event loop ran (baton_event_loop_delay_seconds)');

export const recentTransferSchema = z.object({
  at: z.number().describe('When it settled (ms since the epoch, on this member)'),
  outcome: z.string(),
  durationMs: z.number().min(0).describe('From accepted to settled'),
  name: z.string().optional().describe('The stream or authority that moved'),
  source: z.string().optional().describe('Where it moved from (a node or a datacenter)'),
  target: z.string().optional().describe('Where it was to move to'),
});

export type RecentTransfer = z.output<typeof recentTransferSchema>;

export const homesCatchingUpSchema = z
  .object({
    count: index.describe('Authorities this member is home of and does not yet hold a final serial of (baton_homes_catching_up)'),
    shown: z
      .array(
        z.object({
          authority: z.string(),
          epoch: z.number().int().min(1),
          source: z.string().describe('The source member whose final this member is short of'),
          incarnation: z.string(),
          final: index.describe('The final serial the move recorded'),
          held: index.describe("What this member's replica of the source feed holds"),
        }),
      )
      .max(20)
      .describe('The first of them, oldest first'),
  })
  .nullable()
  .default(null)
  .describe('Authority variant: the homes this member refuses writes for until it holds their moves\' final serials (null in the stream variant)');

export type HomesCatchingUp = z.output<typeof homesCatchingUpSchema>;

/** What one member says of itself. */
export const memberReportSchema = z.object({
  id: z.string(),
  role: z.enum(['leader', 'follower']),
  leader: z.string().nullable().describe('The leader this member follows (itself when it leads); null when it knows none'),
  term: index,
  commitIndex: index.nullable().describe('Highest index known committed; null when the consensus does not report it'),
  appliedIndex: index,
  ready: z.boolean(),
  notReady: notReadySchema.nullable(),
  eventLoopDelay: eventLoopDelaySchema,
  recentTransfers: z
    .array(recentTransferSchema)
    .max(200)
    .describe('Transfers this member settled in the last 10 minutes (stream: as their source; authority: the plans it drove)'),
  homesCatchingUp: homesCatchingUpSchema,
  version: z.string().default('unknown').describe("The member's package version (baton_build_info's version)"),
  build: z
    .string()
    .default('unknown')
    .describe('The git commit the member was built from, or unknown (baton_build_info\'s build); a member too old to say is unknown'),
  nodeVersion: z.string().default('unknown').describe('The Node.js version the member runs (baton_build_info\'s node_version)'),
  controlAddress: z
    .string()
    .nullable()
    .default(null)
    .describe("Where the member's admin API listens when that is not the address peers reach it at (an authority member's control listener); null otherwise"),
});

export type MemberReport = z.output<typeof memberReportSchema>;

export const livenessSchema = z
  .enum(['Alive', 'Suspect', 'Dead'])
  .nullable()
  .describe("The cluster's own verdict on the member from how long ago it was last heard (null where the variant keeps none)");

/** One member as the serving member sees it: its report when it answered, why not otherwise. */
export const memberStatusSchema = z.object({
  id: z.string(),
  address: z.string().nullable(),
  reachable: z.boolean().describe('It answered this request for its report'),
  liveness: livenessSchema,
  report: memberReportSchema.nullable(),
  error: z.string().nullable().describe('Why its report is missing'),
});

export type MemberStatus = z.output<typeof memberStatusSchema>;

export const livenessUnknownSchema = z
  .object({
    since: z.number().describe('When the serving member lost its leader (ms since the epoch, on that member)'),
    detail: z.string(),
  })
  .nullable()
  .optional()
  .describe(
    "Set when the members' liveness is a verdict the leader publishes and the serving member knows no leader: each member's `liveness` is then the last verdict it applied, not a current one",
  );

export type LivenessUnknown = z.output<typeof livenessUnknownSchema>;

export const clusterStatusSchema = z.object({
  variant: z.enum(['stream', 'authority']),
  servedBy: z.string().describe('The member that assembled this picture'),
  leader: z.string().nullable(),
  term: index,
  members: z.array(memberStatusSchema),
  counts: z.record(z.string(), index).describe('streams and nodes (stream variant); authorities (authority variant)'),
  transfersInFlight: z.object({
    count: index,
    shown: z.array(z.record(z.string(), z.unknown())).describe('The oldest transfers in flight, at most 100'),
  }),
  livenessUnknown: livenessUnknownSchema,
});

export type ClusterStatus = z.output<typeof clusterStatusSchema>;

/** The most transfers a picture lists; `count` still says how many there are. */
export const MAX_TRANSFERS_SHOWN = 100;

/** A member report as a stream node's leader sends it, for the documents' examples. */
export const memberReportExample: MemberReport = {
  id: 'n1',
  role: 'leader',
  leader: 'n1',
  term: 3,
  commitIndex: 42,
  appliedIndex: 42,
  ready: true,
  notReady: null,
  eventLoopDelay: { p99Ms: 1.2, maxMs: 4.8 },
  recentTransfers: [{ at: 1764680000000, outcome: 'completed', durationMs: 38, name: 'orders', source: 'n1', target: 'n2' }],
  homesCatchingUp: null,
  version: '0.1.0',
  build: '4c94677',
  nodeVersion: 'v20.20.2',
  controlAddress: null,
};

/** The cluster picture of a one-node stream cluster, for the documents' examples. */
export const clusterStatusExample: ClusterStatus = {
  variant: 'stream',
  servedBy: 'n1',
  leader: 'n1',
  term: 3,
  members: [{ id: 'n1', address: 'http://127.0.0.1:7400', reachable: true, liveness: 'Alive', report: memberReportExample, error: null }],
  counts: { streams: 1, nodes: 1 },
  transfersInFlight: { count: 0, shown: [] },
  livenessUnknown: null,
};
