// `npm start [-- up options]`: a local cluster from this checkout. The arguments are checked
// first, with the last build when there is one, so a start that is refused (a typo, a port in
// use by the options) costs no build. Then only what `baton up` runs is built, incrementally
// (tsc -b keeps build info: an unchanged tree builds in a few seconds), and it runs.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import console from 'node:console';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const main = 'cli/dist/main.js';
const args = process.argv.slice(2);
const run = (command, commandArgs, env = process.env) => spawnSync(command, commandArgs, { cwd: root, stdio: 'inherit', env }).status ?? 1;

if (existsSync(new URL(`../${main}`, import.meta.url))) {
  const checked = run(process.execPath, [main, 'up', ...args], { ...process.env, BATON_CHECK_ARGS: '1' });
  if (checked !== 0) {
    console.error('(checked with the last build; if the options changed since, run "npm run build" first)');
    process.exit(checked);
  }
  // --help has been answered by the check.
  if (args.includes('--help') || args.includes('-h')) process.exit(0);
}
const built = run('npm', ['run', '--silent', 'build:run']);
if (built !== 0) process.exit(built);
// Ctrl-C reaches `baton up` too (one process group): it stops its nodes in order, and this
// process waits for it rather than dying first. A SIGTERM sent to this process is passed on.
const up = spawn(process.execPath, [main, 'up', ...args], { cwd: root, stdio: 'inherit' });
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => up.kill('SIGTERM'));
up.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
