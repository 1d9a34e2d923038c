/**
 * A value as one word a POSIX shell reads back unchanged, so a command the CLI prints (the next
 * page, a retry) can be pasted as shown: plain when it is only safe characters, otherwise in
 * single quotes, with each quote inside written as '\''.
 */
export function shellWord(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
