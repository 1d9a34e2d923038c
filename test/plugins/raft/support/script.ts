import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import type { Message } from '@baton/plugin-raft/internal/core/types.js';
import { CoreNode } from './core-node.js';
import { fmtEntries, fmtMessage, fmtReady } from './format.js';

/**
 * Interprets the transcript command language against in-process cores. Messages wait in one
 * queue until `deliver` or `stabilize`; nothing happens implicitly, so a transcript shows every
 * persisted state, message and apply in order.
 *
 *   add-nodes N [join] [election=E] [heartbeat=H] [inflight=I] [max-entries=M]
 *   campaign ID | tick ID [COUNT] | process-ready [ID...] | deliver [ID...] | stabilize
 *   drop [ID...]            discard queued messages (to these members, or all)
 *   partition A B | C D     cut the network between groups; heal
 *   propose ID VALUE | propose-conf-change ID add|remove MEMBER
 *   transfer-leader ID TARGET | read-index ID CONTEXT
 *   compact ID INDEX        snapshot the applied state, drop the log up to INDEX
 *   restart ID              crash (losing all that was not persisted) and start again
 *   repair ID INDEX         as `baton repair raft` after damage: cut the durable log after INDEX,
 *                           hold the vote back until caught up past the old end, restart
 *   status ID | log ID
 */
export class ScriptRunner {
  readonly nodes = new Map<string, CoreNode>();
  private queue: Message[] = [];
  private groups: string[][] | undefined;
  private bootstrap: string[] = [];

  run(command: string): string {
    const [name, ...args] = command.trim().split(/\s+/);
    const out: string[] = [];
    switch (name) {
      case 'add-nodes':
        this.addNodes(args, out);
        break;
      case 'campaign':
        this.node(args[0]).core.campaign();
        break;
      case 'tick': {
        const n = this.node(args[0]);
        for (let i = 0; i < Number(args[1] ?? 1); i++) n.core.tick();
        break;
      }
      case 'process-ready':
        for (const id of this.ids(args)) this.processReady(id, out);
        break;
      case 'deliver':
        this.deliver(args, out);
        break;
      case 'stabilize':
        this.stabilize(out);
        break;
      case 'drop': {
        const targets = new Set(this.ids(args));
        const kept: Message[] = [];
        for (const m of this.queue) {
          if (targets.has(m.to)) out.push(`dropped: ${fmtMessage(m)}`);
          else kept.push(m);
        }
        this.queue = kept;
        break;
      }
      case 'partition':
        this.groups = args.join(' ').split('|').map((g) => g.trim().split(/\s+/));
        out.push(`partitioned: ${this.groups.map((g) => g.join(' ')).join(' | ')}`);
        break;
      case 'heal':
        this.groups = undefined;
        out.push('healed');
        break;
      case 'propose': {
        const r = this.node(args[0]).core.propose(args.slice(1).join(' '));
        out.push(r.ok ? `appended ${r.term}/${r.index}` : `refused ${r.reason}: ${r.detail}`);
        break;
      }
      case 'propose-conf-change': {
        const r = this.node(args[0]).core.proposeConfChange({ type: args[1] as 'add' | 'remove', member: args[2] });
        out.push(r.ok ? `appended ${r.term}/${r.index}` : `refused ${r.reason}: ${r.detail}`);
        break;
      }
      case 'transfer-leader':
        this.node(args[0]).core.transferLeader(args[1]);
        break;
      case 'read-index':
        this.node(args[0]).core.readIndex(args[1]);
        break;
      case 'compact': {
        const n = this.node(args[0]);
        n.compact(Number(args[1]));
        out.push(`${n.id}: snapshot ${n.disk.snapshot().meta.term}/${n.disk.snapshot().meta.index}, log from ${n.disk.firstIndex()}`);
        break;
      }
      case 'restart':
        this.node(args[0]).restart();
        out.push(`${args[0]} restarted: ${this.statusLine(args[0])}`);
        break;
      case 'repair':
        this.node(args[0]).repair(Number(args[1]));
        out.push(`${args[0]} repaired: ${this.statusLine(args[0])}`);
        break;
      case 'status':
        for (const id of this.ids(args)) this.status(id, out);
        break;
      case 'log':
        for (const id of this.ids(args)) this.log(id, out);
        break;
      default:
        throw new Error(`unknown command ${JSON.stringify(name)}`);
    }
    return out.join('\n');
  }

  private addNodes(args: string[], out: string[]): void {
    const count = Number(args[0]);
    const join = args.includes('join');
    const opt = (k: string) => {
      const a = args.find((x) => x.startsWith(`${k}=`));
      return a ? Number(a.slice(k.length + 1)) : undefined;
    };
    const fresh: string[] = [];
    for (let i = 0; i < count; i++) fresh.push(`n${this.nodes.size + i + 1}`);
    if (!join) this.bootstrap.push(...fresh);
    for (const id of fresh) {
      const rng = new SeededRng(Number(id.slice(1)));
      const node = new CoreNode(id, join ? this.bootstrap : [...this.bootstrap], rng, {
        electionTicks: opt('election'),
        heartbeatTicks: opt('heartbeat'),
        maxInflight: opt('inflight'),
        maxEntriesPerMessage: opt('max-entries'),
      });
      this.nodes.set(id, node);
    }
    out.push(`added ${fresh.join(' ')}${join ? ' (joining)' : ''} voters=[${this.bootstrap.join(' ')}]`);
  }

  private node(id: string): CoreNode {
    const n = this.nodes.get(id);
    if (!n) throw new Error(`no member ${id}`);
    return n;
  }

  private ids(args: string[]): string[] {
    return args.length > 0 ? args : [...this.nodes.keys()];
  }

  private processReady(id: string, out: string[]): boolean {
    const rd = this.node(id).processReady();
    if (!rd) return false;
    out.push(...fmtReady(id, rd));
    this.queue.push(...rd.messages);
    return true;
  }

  private cut(m: Message): boolean {
    if (!this.groups) return false;
    const g = (id: string) => this.groups!.findIndex((grp) => grp.includes(id));
    return g(m.from) !== g(m.to);
  }

  private deliver(args: string[], out: string[]): number {
    const targets = new Set(this.ids(args));
    const now = this.queue.filter((m) => targets.has(m.to));
    this.queue = this.queue.filter((m) => !targets.has(m.to));
    for (const m of now) {
      if (this.cut(m)) {
        out.push(`partitioned: ${fmtMessage(m)}`);
        continue;
      }
      out.push(`deliver: ${fmtMessage(m)}`);
      this.node(m.to).step(m);
    }
    return now.length;
  }

  private stabilize(out: string[]): void {
    for (let round = 0; round < 1000; round++) {
      let busy = false;
      for (const id of this.nodes.keys()) busy = this.processReady(id, out) || busy;
      busy = this.deliver([], out) > 0 || busy;
      if (!busy) return;
    }
    throw new Error('stabilize did not settle in 1000 rounds');
  }

  private statusLine(id: string): string {
    const c = this.node(id).core;
    const catchUp = c.hardState().catchUpTo;
    return `${c.role} term=${c.term} lead=${c.lead || '-'} vote=${c.vote || '-'} commit=${c.log.committed} applied=${c.log.applied} last=${c.log.lastIndex()} voters=[${c.voters().join(' ')}]${catchUp ? ` catch-up=${catchUp}` : ''}`;
  }

  private status(id: string, out: string[]): void {
    out.push(`${id}: ${this.statusLine(id)}`);
    const c = this.node(id).core;
    if (c.role !== 'leader') return;
    for (const peer of c.voters()) {
      const pr = c.progressOf(peer);
      if (!pr || peer === id) continue;
      out.push(`  ${peer}: ${pr.state} match=${pr.match} next=${pr.next} inflight=${pr.inflights.count()}${pr.state === 'snapshot' ? ` pending=${pr.pendingSnapshot}` : ''}`);
    }
  }

  private log(id: string, out: string[]): void {
    const n = this.node(id);
    const c = n.core;
    const snap = n.disk.snapshot().meta;
    const entries = c.log.slice(c.log.firstIndex(), c.log.lastIndex() + 1) ?? [];
    out.push(`${id}: snapshot=${snap.term}/${snap.index} entries=${fmtEntries(entries)}`);
    out.push(`${id}: applied=${n.state.index} digest=${n.state.digest}`);
  }
}

/** A transcript: blocks of `command\n----\noutput` separated by blank lines; `#` lines are comments. */
export interface Block {
  comments: string[];
  command: string;
  expected: string;
}

export function parseTranscript(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length) {
    const comments: string[] = [];
    while (i < lines.length && (lines[i].trim() === '' || lines[i].startsWith('#'))) {
      if (lines[i].startsWith('#')) comments.push(lines[i]);
      i++;
    }
    if (i >= lines.length) break;
    const command = lines[i++];
    if (lines[i] !== '----') throw new Error(`transcript line ${i + 1}: expected ---- after ${JSON.stringify(command)}`);
    i++;
    const body: string[] = [];
    while (i < lines.length && lines[i] !== '') body.push(lines[i++]);
    blocks.push({ comments, command, expected: body.join('\n') });
  }
  return blocks;
}

export function renderTranscript(blocks: Block[]): string {
  return (
    blocks
      .map((b) => [...b.comments, b.command, '----', ...(b.expected ? [b.expected] : [])].join('\n'))
      .join('\n\n') + '\n'
  );
}
