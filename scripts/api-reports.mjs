// The API reports of the published packages, made by Microsoft API Extractor in this one process
// from each package's emitted dist/index.d.ts (run it after `tsc -b`).
//
//   node scripts/api-reports.mjs [--check]  fails, naming each package and showing the diff, when a
//                                           package's public surface differs from its checked-in
//                                           <unscoped-name>.api.md (npm run api:check, in npm test)
//   node scripts/api-reports.mjs --update   rewrites the reports that differ (npm run api:update)
//   node scripts/api-reports.mjs --rollups  only what the build needs, never failing on a report
//                                           (npm run build)
//
// Every mode writes each package's public rollup, dist/index.public.d.ts: its declarations
// without the @internal ones, which its package.json names as the types consumers compile against.
import console from 'node:console';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { missingEntryPoints, publishedPackages } from './api/published-packages.mjs';
import { runApiExtractor } from './api/run-api-extractor.mjs';

const USAGE = 'usage: node scripts/api-reports.mjs [--check | --update | --rollups] [--checkout DIR]';

function parseArguments(argv) {
  let mode = 'check';
  let checkout = fileURLToPath(new globalThis.URL('..', import.meta.url));
  for (let i = 0; i < argv.length; i++) {
    if (['--check', '--update', '--rollups'].includes(argv[i])) mode = argv[i].slice(2);
    else if (argv[i] === '--checkout' && argv[i + 1]) checkout = argv[++i];
    else throw new UsageError(`unknown argument ${argv[i]}\n${USAGE}`);
  }
  return { mode, checkout };
}

class UsageError extends Error {}

function main() {
  const { mode, checkout } = parseArguments(process.argv.slice(2));
  const { withApi } = publishedPackages(checkout);
  const unbuilt = missingEntryPoints(withApi);
  if (unbuilt.length > 0) {
    console.error(`not built (run npx tsc -b first): ${unbuilt.join(', ')}`);
    return 1;
  }
  const scratch = mkdtempSync(join(tmpdir(), 'baton-api-'));
  try {
    const started = process.hrtime.bigint();
    const results = runApiExtractor({ checkout, packages: withApi, update: mode === 'update', scratch });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const outOfDate = results.filter((r) => r.reportChanged);
    const withProblems = results.filter((r) => r.problems.length > 0);
    for (const result of withProblems) {
      console.error(`${result.package.name}: API Extractor found problems:`);
      for (const problem of result.problems) console.error(`  ${problem}`);
    }
    for (const result of outOfDate) {
      const report = relative(checkout, result.package.report);
      if (mode === 'update') console.log(`${result.package.name}: updated ${report}`);
      else if (mode === 'check') {
        console.error(
          `${result.package.name}: its API differs from ${report}. If the change is meant, run ` +
            `npm run api:update and commit the report with it.\n${result.diff}`,
        );
      }
    }
    const summary =
      `API reports: ${results.length} packages in ${seconds.toFixed(1)} s; ` +
      (mode === 'update' ? `${outOfDate.length} updated` : `${outOfDate.length} out of date`) +
      (withProblems.length > 0 ? `, ${withProblems.length} with problems` : '');
    console.log(summary);
    if (mode === 'rollups') {
      if (outOfDate.length + withProblems.length > 0) console.log('npm run api:check says what differs');
      return 0;
    }
    const failed = withProblems.length > 0 || (mode === 'check' && outOfDate.length > 0);
    return failed ? 1 : 0;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

try {
  process.exitCode = main();
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
