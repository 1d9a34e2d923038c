import type { ConfChange, Entry, Message, Ready } from '@baton/plugin-raft/internal/core/types.js';

/** One-line renderings for transcripts, in etcd's term/index order. */
export function fmtEntry(e: Entry): string {
  if (e.type === 'conf') {
    const cc = e.data as ConfChange;
    return `${e.term}/${e.index} conf ${cc.type} ${cc.member} -> [${cc.voters.join(' ')}]`;
  }
  if (e.data === null) return `${e.term}/${e.index} noop`;
  return `${e.term}/${e.index} ${JSON.stringify(e.data)}`;
}

export function fmtEntries(es: readonly Entry[]): string {
  return `[${es.map(fmtEntry).join(', ')}]`;
}

export function fmtMessage(m: Message): string {
  const head = `${m.from}->${m.to} ${m.type} term=${m.term}`;
  switch (m.type) {
    case 'app':
      return `${head} prev=${m.logTerm}/${m.index} commit=${m.commit} entries=${fmtEntries(m.entries ?? [])}`;
    case 'app-resp':
      if (m.reject) return `${head} reject index=${m.index} hint=${m.logTerm}/${m.rejectHint}`;
      return `${head} index=${m.index}`;
    case 'heartbeat':
      return `${head} commit=${m.commit}${m.readSeq !== undefined ? ` readSeq=${m.readSeq}` : ''}`;
    case 'heartbeat-resp':
      return `${head}${m.reject ? ` lost-entries last=${m.index} commit=${m.commit}` : ''}${m.readSeq !== undefined ? ` readSeq=${m.readSeq}` : ''}`;
    case 'vote':
    case 'pre-vote':
      return `${head} last=${m.logTerm}/${m.index}${m.context ? ` ${m.context}` : ''}`;
    case 'vote-resp':
    case 'pre-vote-resp':
      return `${head} ${m.reject ? 'rejected' : 'granted'}`;
    case 'snap':
      return `${head} snapshot=${m.snapshot!.meta.term}/${m.snapshot!.meta.index} voters=[${m.snapshot!.meta.voters.join(' ')}]`;
    case 'read-index':
      return `${head} context=${m.context}`;
    case 'read-index-resp':
      return `${head} index=${m.index} context=${m.context}`;
    case 'timeout-now':
      return head;
  }
}

export function fmtReady(id: string, rd: Ready): string[] {
  const out = [`${id} ready:`];
  if (rd.softState) out.push(`  soft: ${rd.softState.role} lead=${rd.softState.lead || '-'}`);
  if (rd.hardState) {
    const hs = rd.hardState;
    out.push(`  hard: term=${hs.term} vote=${hs.vote || '-'} commit=${hs.commit}${hs.catchUpTo ? ` catch-up=${hs.catchUpTo}` : ''}`);
  }
  if (rd.snapshot) {
    out.push(`  snapshot: ${rd.snapshot.meta.term}/${rd.snapshot.meta.index} voters=[${rd.snapshot.meta.voters.join(' ')}]`);
  }
  if (rd.entries.length > 0) out.push(`  persist: ${fmtEntries(rd.entries)}`);
  if (rd.committedEntries.length > 0) out.push(`  apply: ${fmtEntries(rd.committedEntries)}`);
  for (const r of rd.readStates) out.push(`  read-state: index=${r.index} context=${r.context}`);
  for (const m of rd.messages) out.push(`  send: ${fmtMessage(m)}`);
  return out;
}
