/**
 * The `baton repair` command an operator runs on a damaged store, as a message quotes it: the
 * directory shell-quoted when it needs to be, so it can be pasted as is.
 *
 * @internal
 */
export function repairCommand(store: 'wal' | 'raft', dir: string): string {
  const word = /^[\w./:@%+=,-]+$/.test(dir) ? dir : `'${dir.replace(/'/g, `'\\''`)}'`;
  return `baton repair ${store} ${word}`;
}
