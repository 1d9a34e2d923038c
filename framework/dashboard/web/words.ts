/** `1 node`, `2 nodes`; `1 authority`, `3 authorities`: a count with its noun (given plural) agreeing. */
export function plural(count: number, nouns: string): string {
  if (count !== 1) return `${count} ${nouns}`;
  return `${count} ${nouns.endsWith('ies') ? `${nouns.slice(0, -3)}y` : nouns.replace(/s$/, '')}`;
}

/** A wall-clock time as the operator reads it beside a log line: 01:40:12. */
export function clockTime(ms: number): string {
  return new Date(ms).toLocaleTimeString('en-GB', { hour12: false });
}

/** `12 s`, `3 min 5 s`, `2 h 1 min`: how long ago, to the second. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
