import type { MetadataConsensus } from '@baton/contracts';
import { processEventLoopDelay, buildInfo, consensusFactsOf } from '@baton/http';
import type { Readiness } from './readiness.js';
import type { RecentTransfers } from './recent-transfers.js';
import type { HomesCatchingUp, MemberReport } from './schemas.js';

/**
 * This member's own facts: its consensus position and role, its readiness (the verdict /readyz
 * gives), how late its event loop runs (what /metrics shows as baton_event_loop_delay_seconds)
 * the transfers it settled lately and the code it runs (version, build, Node.js version, as
 * baton_build_info shows them); in the authority variant, the homes it is still catching up on
 * and its control listener (which a roster, listing public addresses, does not say).
 */
export function memberReport(
  self: string,
  consensus: MetadataConsensus<unknown, unknown, unknown>,
  readiness: Readiness,
  recent?: RecentTransfers,
  homesCatchingUp?: () => HomesCatchingUp,
  controlAddress?: () => string | undefined,
): MemberReport {
  const facts = consensusFactsOf(consensus);
  const verdict = readiness.check();
  const delay = processEventLoopDelay().read();
  return {
    id: self,
    ...facts,
    ready: verdict.ready,
    notReady: verdict.ready ? null : { reason: verdict.reason, detail: verdict.detail },
    eventLoopDelay: { p99Ms: delay.p99 * 1000, maxMs: delay.max * 1000 },
    recentTransfers: recent?.list() ?? [],
    homesCatchingUp: homesCatchingUp?.() ?? null,
    ...buildInfo(),
    controlAddress: controlAddress?.() ?? null,
  };
}
