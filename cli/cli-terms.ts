/**
 * A node's error details speak to API callers ("create it with POST /v1/admin/streams"); a
 * person at the command line is told the command that does it instead. Each rule names the
 * server's phrasing it replaces, so a server message that changes falls back to its own words.
 */
const RULES: readonly { server: RegExp; cli: (match: RegExpExecArray) => string }[] = [
  {
    server: /stream (\S+) does not exist: create it with POST \/v1\/admin\/streams/,
    cli: (m) => `stream ${m[1]} does not exist: create it with "baton streams create ${m[1]}"`,
  },
  {
    server: /(\S+) has no home yet[;:] establish it with a transfer_authority command/,
    cli: (m) => `${m[1]} has no home yet: create it with "baton authority create ${m[1]} --home DATACENTER"`,
  },
  {
    server: /use a planned transfer \(POST \/availability\/v1\/transfers\)/,
    cli: () => 'use a planned transfer ("baton authority transfer")',
  },
];

export function inCliTerms(detail: string): string {
  let text = detail;
  for (const rule of RULES) {
    const match = rule.server.exec(text);
    if (match) text = text.replace(match[0], rule.cli(match));
  }
  return text;
}
