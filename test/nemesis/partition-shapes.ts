import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { shuffle } from './seeded-shuffle.js';

export type PartitionShape = 'isolate' | 'halves' | 'bridge';

/** A partition as the links it cuts, and the words that say what it is. */
export interface Partition {
  shape: PartitionShape;
  /** Member pairs that cannot talk, each pair once. */
  cuts: Array<[string, string]>;
  /** The members that lost touch with part of the cluster: the lone one, the minority, both halves of a bridge. */
  stranded: string[];
  describe: string;
}

/**
 * The partitions of Jepsen's nemeses, drawn from the seed:
 * - isolate: one member (often the leader) cut off from all others;
 * - halves: a minority and a majority, chosen at random;
 * - bridge: two halves that cannot talk, and one member in the middle that talks to both (it can
 *   be elected by both sides: the shape that catches leaders who trust a stale majority).
 */
export function drawPartition(
  rng: SeededRng,
  members: readonly string[],
  leader: string | undefined,
): Partition {
  const shape = rng.pick<PartitionShape>(['isolate', 'halves', 'bridge']);
  if (shape === 'isolate') {
    const alone = leader !== undefined && rng.chance(0.6) ? leader : rng.pick(members);
    return {
      shape,
      cuts: members.filter((m) => m !== alone).map((m) => [alone, m]),
      stranded: [alone],
      describe: `isolate ${alone}${alone === leader ? ' (the leader)' : ''}`,
    };
  }
  const shuffled = shuffle(rng, members);
  if (shape === 'halves') {
    const minority = shuffled.slice(0, Math.floor(members.length / 2));
    const majority = shuffled.slice(minority.length);
    return {
      shape,
      cuts: across(minority, majority),
      stranded: minority,
      describe: `minority [${minority.join(', ')}] | majority [${majority.join(', ')}]`,
    };
  }
  const middle = shuffled[0];
  const rest = shuffled.slice(1);
  const left = rest.slice(0, Math.floor(rest.length / 2));
  const right = rest.slice(left.length);
  return {
    shape,
    cuts: across(left, right),
    stranded: rest,
    describe: `bridge [${left.join(', ')}] - ${middle} - [${right.join(', ')}]`,
  };
}

function across(a: readonly string[], b: readonly string[]): Array<[string, string]> {
  return a.flatMap((x) => b.map((y): [string, string] => [x, y]));
}
