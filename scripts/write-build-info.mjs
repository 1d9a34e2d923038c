// Records which commit a build was made from in framework/http/dist/build-info.json (the package that reports it), so a running member can
// say so (its member report, baton_build_info) without asking git at run time. Run by
// `npm run build`; outside a git checkout, or without git, the build is "unknown".
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { URL } from 'node:url';

let build = 'unknown';
try {
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  if (/^[0-9a-f]{40}$/.test(commit)) build = commit;
} catch {
  // Not a checkout (a packed release, a copy): the build stays unknown.
}
const dist = new URL('../framework/http/dist/', import.meta.url);
mkdirSync(dist, { recursive: true });
writeFileSync(new URL('build-info.json', dist), `${JSON.stringify({ build })}\n`);
