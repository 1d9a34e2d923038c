import { callJson } from '../http-json.js';
import type { OperationLog } from '../operation-log.js';
import type { AuthorityCluster, AuthorityMember } from '../authority/authority-cluster.js';
import type { WriteInput, WriteOutput } from '../authority/authority-workload.js';

/** One entry of a member's own change feed, as GET /availability/v1/feed pages it. */
interface FeedEntry {
  serial: number;
  authority: string;
  operation: string;
  epoch: number;
}

/** A member's own change feed as it stands: its incarnation, its serial and the entries it still keeps. */
export interface FeedReading {
  incarnation: string;
  serial: number;
  entries: FeedEntry[];
}

const PAGE = 1_000;

/**
 * Reads `node`'s own feed from its first kept entry to its end, as a peer reads it (with the
 * credential of another member, and no `from`: a reading that trims nothing).
 */
export async function readFeed(c: AuthorityCluster, node: AuthorityMember): Promise<FeedReading> {
  const peer = c.nodes.find((n) => n.id !== node.id) ?? node;
  const entries: FeedEntry[] = [];
  let incarnation: string | undefined;
  let serial = 0;
  for (let after = 0; ;) {
    const r = await callJson(`${node.public}/availability/v1/feed?after=${after}&limit=${PAGE}`, {
      headers: c.peerHeaders(peer.id),
      timeoutMs: 5_000,
    });
    if (r.kind !== 'answer' || r.status !== 200)
      throw new Error(`could not read ${node.id}'s feed: ${JSON.stringify(r).slice(0, 200)}`);
    incarnation ??= r.body.incarnation;
    serial = r.body.serial;
    const page = r.body.entries as FeedEntry[];
    entries.push(...page);
    if (page.length < PAGE) return { incarnation: incarnation!, serial, entries };
    after = page[page.length - 1].serial;
  }
}

/**
 * Nothing a member acknowledged is lost from its feed across its kills: its incarnation is the
 * one it started with (a feed that came back empty would start a new one, and its serials
 * would count again from 0), its serial is at least every serial it acknowledged, and every
 * acknowledged write whose serial it still keeps (entries all peers applied are trimmed) is
 * there with its content: authority, operation and epoch.
 */
export function checkFeedsKeptAcknowledged(
  log: OperationLog,
  first: ReadonlyMap<string, string>,
  last: ReadonlyMap<string, FeedReading>,
): string[] {
  const problems: string[] = [];
  const writes = log.of<WriteInput, WriteOutput>('write').filter((w) => w.outcome === 'ok');
  for (const [member, feed] of last) {
    const started = first.get(member);
    if (started !== undefined && started !== feed.incarnation)
      problems.push(
        `${member}: its feed started over (incarnation ${started}, now ${feed.incarnation}): every write it acknowledged before is gone`,
      );
    const bySerial = new Map(feed.entries.map((e) => [e.serial, e]));
    const kept = feed.entries.length > 0 ? feed.entries[0].serial : feed.serial + 1;
    for (const w of writes.filter((x) => x.input.member === member)) {
      const { serial, epoch } = w.output!;
      if (serial > feed.serial) {
        problems.push(
          `${member}: write ${w.input.operation} was acknowledged with serial ${serial}, but its feed ends at ${feed.serial}: lost`,
        );
        continue;
      }
      if (serial < kept) continue;
      const entry = bySerial.get(serial);
      if (!entry)
        problems.push(
          `${member}: write ${w.input.operation} (serial ${serial}) is missing from its feed`,
        );
      else if (
        entry.operation !== w.input.operation ||
        entry.authority !== w.input.authority ||
        entry.epoch !== epoch
      )
        problems.push(
          `${member}: serial ${serial} holds ${entry.authority}/${entry.operation} at epoch ${entry.epoch}, but write ${w.input.authority}/${w.input.operation} at epoch ${epoch} was acknowledged with it`,
        );
    }
  }
  return problems;
}
