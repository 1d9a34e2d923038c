// Setup (b): three plugins/raft voters as three processes (member.ts), HTTP on loopback, file
// storage (one fsync per Ready) in temporary directories. The load runs inside the leader's
// process: no client hop, only consensus (leader -> followers over HTTP, fsync, commit, apply).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { freeLoopbackPort } from '@baton/conformance/internal/servers/redis-server.js';
import type { LoadSummary } from './load.js';

const MEMBER_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'member.js');
const ANSWER_TIMEOUT_MS = 60_000;

export interface Member {
  id: string;
  /** Where its HTTP server listens (Raft peer routes, and the bench's client route). */
  url: string;
  child: ChildProcess;
  exited: boolean;
}

/** Sends `command` and resolves with the child's next message of type `answer`. */
function ask<T>(member: Member, command: object, answer: string, timeoutMs = ANSWER_TIMEOUT_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`member ${member.id} gave no ${answer} within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (message: { type: string }) => {
      if (message.type === answer) done(undefined, message as T);
    };
    const onExit = () => done(new Error(`member ${member.id} exited while asked for ${answer}`));
    const done = (error?: Error, value?: T) => {
      clearTimeout(timer);
      member.child.off('message', onMessage);
      member.child.off('exit', onExit);
      if (error) reject(error);
      else resolve(value as T);
    };
    member.child.on('message', onMessage);
    member.child.once('exit', onExit);
    if (Object.keys(command).length > 0) member.child.send(command);
  });
}

export async function startMembers(dir: string): Promise<Member[]> {
  const ids = ['p1', 'p2', 'p3'];
  const ports: number[] = [];
  while (ports.length < ids.length) {
    const port = await freeLoopbackPort();
    if (!ports.includes(port)) ports.push(port);
  }
  const urls = Object.fromEntries(ids.map((id, i) => [id, `http://127.0.0.1:${ports[i]}`]));
  const members = ids.map((id, i) => {
    const peers = Object.fromEntries(Object.entries(urls).filter(([other]) => other !== id));
    const child = fork(MEMBER_SCRIPT, [id, String(ports[i]), JSON.stringify(peers), join(dir, id)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const member: Member = { id, url: urls[id], child, exited: false };
    child.once('exit', () => (member.exited = true));
    return member;
  });
  await Promise.all(members.map((m) => ask(m, {}, 'ready')));
  return members;
}

export async function benchHttpProcesses(concurrencies: number[], seconds: number): Promise<LoadSummary[]> {
  const results: LoadSummary[] = [];
  for (const concurrency of concurrencies) {
    const dir = await mkdtemp(join(tmpdir(), 'baton-bench-raft-'));
    const members = await startMembers(dir);
    try {
      const leader = await pollLeader(members);
      const { summary } = await ask<{ summary: LoadSummary }>(leader, { type: 'load', concurrency, seconds }, 'result');
      results.push(summary);
    } finally {
      await Promise.all(members.map((m) => stopMember(m)));
      await rm(dir, { recursive: true, force: true });
    }
  }
  return results;
}

/** Asks every member in turn until one says it leads, for up to 15 s. */
export async function pollLeader(members: Member[]): Promise<Member> {
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline) {
    for (const m of members) {
      const { isLeader } = await ask<{ isLeader: boolean }>(m, { type: 'status' }, 'status');
      if (isLeader) return m;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('no leader among the three raft processes within 15 s');
}

export async function stopMember(member: Member): Promise<void> {
  if (member.exited) return;
  const exited = new Promise<void>((resolve) => member.child.once('exit', () => resolve()));
  member.child.send({ type: 'stop' });
  const timer = setTimeout(() => member.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
