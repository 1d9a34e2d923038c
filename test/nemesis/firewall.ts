import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { canSwitchUsers } from './member-identity.js';

const run = promisify(execFile);

/** What a rule needs to know of a member: the uid its packets carry, the ports it listens on. */
export interface FirewalledMember {
  id: string;
  uid: number;
  ports: readonly number[];
}

/** Every rule this suite adds carries this comment prefix, then the pid of the runner that owns it. */
const TAG = 'baton-nemesis';

/**
 * Network partitions between the members of one run, made of iptables rules on loopback:
 * `OUTPUT -o lo -p tcp -m owner --uid-owner A --dport <B's ports> -j DROP` drops what member A
 * sends to member B's listeners. A cut link drops both directions, so neither side can open a
 * connection to the other, nor send on one it had (what the other still sends on an old
 * connection is an answer to a request sent before the cut). Clients (the runner, uid 0) are
 * never cut: like a Jepsen client on its node, they keep talking to the member they chose.
 *
 * Every rule is tagged with the runner's pid and run, removed on heal and at close; rules left
 * by a runner that died (kill -9 of the test) are removed by the next one (`removeStaleRules`).
 */
export class Firewall {
  private readonly rules: string[][] = [];

  private constructor(private readonly comment: string) {}

  /** A firewall for one run, or the reason partitions cannot be made here (said, never silent). */
  static async open(run: string): Promise<Firewall | { unavailable: string }> {
    const reason = await unavailableReason();
    if (reason) return { unavailable: reason };
    await removeStaleRules();
    return new Firewall(`${TAG}:${process.pid}:${run.replace(/[^A-Za-z0-9_.-]/g, '-')}`);
  }

  /** Drops every packet between `a` and `b`, both ways. */
  async cut(a: FirewalledMember, b: FirewalledMember): Promise<void> {
    await this.drop(a, b);
    await this.drop(b, a);
  }

  /**
   * Drops what `from` sends to `ports` (a service the runner started, such as etcd, whose own
   * uid is the runner's and must not be cut): the member loses that service.
   */
  async cutFrom(from: FirewalledMember, ports: readonly number[]): Promise<void> {
    await this.drop(from, { ports });
  }

  /** Removes every rule of this run: all links are whole again. */
  async heal(): Promise<void> {
    const failures: string[] = [];
    while (this.rules.length > 0) {
      const rule = this.rules.pop()!;
      try {
        await iptables(['-D', ...rule]);
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    if (failures.length > 0)
      throw new Error(`could not remove firewall rules: ${failures.join('; ')}`);
  }

  get active(): number {
    return this.rules.length;
  }

  private async drop(from: FirewalledMember, to: Pick<FirewalledMember, 'ports'>): Promise<void> {
    const rule = [
      'OUTPUT',
      '-o',
      'lo',
      '-p',
      'tcp',
      '-m',
      'owner',
      '--uid-owner',
      String(from.uid),
      '-m',
      'multiport',
      '--dports',
      to.ports.join(','),
      '-m',
      'comment',
      '--comment',
      this.comment,
      '-j',
      'DROP',
    ];
    await iptables(['-A', ...rule]);
    this.rules.push(rule);
  }
}

/**
 * The firewall of one run, when its members have uids of their own to name in rules; else why
 * partitions are skipped (said in every summary, never silently).
 */
export async function firewallFor(
  identities: unknown[] | undefined,
  run: string,
): Promise<{ firewall?: Firewall; partitionsUnavailable?: string }> {
  if (!identities)
    return {
      partitionsUnavailable:
        'members run as the runner (not root): no uid of their own to firewall',
    };
  const opened = await Firewall.open(run);
  return opened instanceof Firewall
    ? { firewall: opened }
    : { partitionsUnavailable: opened.unavailable };
}

/** Undefined when rules can be made; else what is missing, in words a person can act on. */
async function unavailableReason(): Promise<string | undefined> {
  if (!canSwitchUsers()) {
    return 'partitions need root: members must run under their own uids for iptables owner rules';
  }
  try {
    await iptables(['-S', 'OUTPUT']);
  } catch (error) {
    return `iptables does not work here (${(error as Error).message.split('\n')[0]}): install iptables (.ci/run does)`;
  }
  return undefined;
}

/** Removes rules tagged by runners that are no longer alive. */
export async function removeStaleRules(): Promise<number> {
  const { stdout } = await run('iptables', ['-w', '-S', 'OUTPUT']);
  let removed = 0;
  for (const line of stdout.split('\n')) {
    const match = line.match(new RegExp(`--comment "?${TAG}:(\\d+):`));
    if (!match || processAlive(Number(match[1]))) continue;
    const spec = line
      .trim()
      .split(/\s+/)
      .map((word) => word.replace(/^"|"$/g, ''));
    if (spec[0] !== '-A') continue;
    // Another runner starting at the same moment may have removed it first.
    if (
      await iptables(['-D', ...spec.slice(1)]).then(
        () => true,
        () => false,
      )
    )
      removed += 1;
  }
  return removed;
}

function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function iptables(args: string[]): Promise<void> {
  // -w: wait for the xtables lock, another run may be changing rules right now.
  await run('iptables', ['-w', ...args]);
}
