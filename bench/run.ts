// Runs every benchmark under bench/, one after another, each in its own process so one
// benchmark's heap and timers cannot colour the next. `npm run bench -- stores consensus` runs
// only the named ones. Each benchmark prints its human table and one JSON line per measurement.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((name) => statSync(join(here, name)).isDirectory())
  .filter((name) => {
    try {
      return statSync(join(here, name, 'run.js')).isFile();
    } catch {
      return false;
    }
  })
  .sort();

const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !available.includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${available.join(', ')}`);
  process.exit(2);
}

let failed = 0;
for (const name of asked.length > 0 ? asked : available) {
  console.log(`\n=== bench/${name}`);
  // The runner's own flags (--conditions=baton-internal) too: the benches import the packages' internals.
  const result = spawnSync(process.execPath, [...process.execArgv, '--expose-gc', join(here, name, 'run.js')], { stdio: 'inherit' });
  if (result.status !== 0) {
    failed++;
    console.error(`bench/${name} failed with exit code ${result.status ?? result.signal}`);
  }
}
process.exit(failed > 0 ? 1 : 0);
