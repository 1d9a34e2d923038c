// `npm run lint:openapi`: writes the OpenAPI document of every listener of both variants
// (write-openapi.mjs) and lints them with Redocly's recommended ruleset (redocly.yaml). Redocly
// exits 0 on warnings; this fails on any problem it reports, warnings included, naming each.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import process from 'node:process';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// stderr is kept for a failure: Redocly prints banners there on every run.
const run = (args) =>
  execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });

const files = run([join(root, 'scripts', 'write-openapi.mjs')]).trim().split('\n');
let output;
try {
  output = run([join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js'), 'lint', '--format=json', ...files]);
} catch (error) {
  // Exit code 1 with errors found: the report is still on stdout.
  output = error.stdout;
  if (!output) {
    process.stderr.write(error.stderr ?? '');
    throw error;
  }
}
// One JSON report per document, printed back to back: each starts with "{" at a line's start.
const reports = output
  .trim()
  .split(/^(?=\{$)|(?<=^\})(?=\{$)/m)
  .map((text) => JSON.parse(text.trim()));
const totals = { errors: 0, warnings: 0, ignored: 0 };
for (const report of reports) {
  for (const key of Object.keys(totals)) totals[key] += report.totals[key];
  for (const problem of report.problems) {
    const where = problem.location?.[0];
    process.stderr.write(`${where?.source?.ref ?? '?'} ${where?.pointer ?? ''}: ${problem.severity} ${problem.ruleId}: ${problem.message}\n`);
  }
}
const { errors, warnings, ignored } = totals;
process.stdout.write(`OpenAPI lint (Redocly recommended) of ${files.length} documents: ${errors} errors, ${warnings} warnings, ${ignored} ignored as listed in .redocly.lint-ignore.yaml\n`);
if (errors + warnings > 0) process.exit(1);
