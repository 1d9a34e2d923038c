import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { apiFixture, FIXTURE_DECLARATIONS, FIXTURE_PACKAGE, FIXTURE_REPORT, FIXTURE_ROLLUP } from './api-fixture.js';
import { publishedWorkspaces } from './workspaces.js';

// The API reports (scripts/api-reports.mjs): one per published package, checked in, and a check
// that fails when a package's surface changes without its report. The check is run on a fixture
// checkout in a temp dir, never by editing the real tree.

// A bound on a hang, not an expectation: each test runs the script a few times, and each run
// loads API Extractor and TypeScript.
const FIXTURE_TIMEOUT_MS = 5 * 60_000;

const unscoped = (name: string) => name.replace(/^@[^/]+\//, '');

test('every published package with declarations has its API report checked in beside its package.json', (t) => {
  const withApi = publishedWorkspaces().filter(
    (w) => (w.manifest.exports as Record<string, unknown> | undefined)?.['.'] !== undefined,
  );
  t.true(withApi.length >= 10, `${withApi.length} packages with an API`);
  for (const { manifest, dir } of withApi) {
    const report = join(dir, `${unscoped(manifest.name)}.api.md`);
    t.true(existsSync(report), `${manifest.name}: ${report}`);
    if (existsSync(report))
      t.true(
        readFileSync(report, 'utf8').startsWith(`## API Report File for "${manifest.name}"`),
        `${report} is API Extractor's report of ${manifest.name}`,
      );
  }
  // Only @baton/templates, the files `baton new` copies, is published without an entry point.
  const reported = new Set(withApi.map((w) => w.manifest.name));
  t.deepEqual(
    publishedWorkspaces()
      .map((w) => w.manifest.name)
      .filter((name) => !reported.has(name)),
    ['@baton/templates'],
  );
});

test('the check fails naming the package and showing the export when a public export is added without updating the report', async (t) => {
  t.timeout(FIXTURE_TIMEOUT_MS);
  const fixture = await apiFixture(t);
  const made = await fixture.reports('--update');
  t.is(made.code, 0, made.summary);
  const report = await fixture.read(FIXTURE_REPORT);
  t.regex(report, /export function makeWidget\(name: string\): Widget;/);

  await fixture.declare(`${FIXTURE_DECLARATIONS}/** Counts the widgets. */\nexport declare function countWidgets(): number;\n`);
  const checked = await fixture.reports('--check');
  t.is(checked.code, 1, checked.summary);
  t.regex(checked.stderr, new RegExp(`${FIXTURE_PACKAGE}: its API differs from ${FIXTURE_REPORT}`));
  t.regex(checked.stderr, /^\+export function countWidgets\(\): number;$/m, 'the diff shows the new export');
  t.regex(checked.stderr, /npm run api:update/);
  t.is(await fixture.read(FIXTURE_REPORT), report, 'the check leaves the checked-in report alone');

  // The build's mode writes the rollup and says the report is out of date, without failing.
  const built = await fixture.reports('--rollups');
  t.is(built.code, 0, built.summary);
  t.regex(built.stdout, /1 out of date/);

  const updated = await fixture.reports('--update');
  t.is(updated.code, 0, updated.summary);
  t.regex(await fixture.read(FIXTURE_REPORT), /export function countWidgets\(\): number;/);
  t.is((await fixture.reports('--check')).code, 0, 'updated, the check passes again');
});

test('a package without its report, or with an export removed, fails the check as an added export does', async (t) => {
  t.timeout(FIXTURE_TIMEOUT_MS);
  const fixture = await apiFixture(t);
  const unreported = await fixture.reports('--check');
  t.is(unreported.code, 1, unreported.summary);
  t.regex(unreported.stderr, new RegExp(`${FIXTURE_REPORT} does not exist yet`));
  t.is((await fixture.reports('--update')).code, 0);
  await fixture.declare(FIXTURE_DECLARATIONS.replace(/\/\*\* Makes a widget[^]*?Widget;\n/, ''));
  const checked = await fixture.reports('--check');
  t.is(checked.code, 1, checked.summary);
  t.regex(checked.stderr, /^-export function makeWidget\(name: string\): Widget;$/m);
});

test('an @internal export is in the report, marked, and left out of the public rollup; a public one may not name it', async (t) => {
  t.timeout(FIXTURE_TIMEOUT_MS);
  const fixture = await apiFixture(t);
  const made = await fixture.reports('--update');
  t.is(made.code, 0, made.summary);
  t.regex(await fixture.read(FIXTURE_REPORT), /\/\/ @internal\nexport function resetWidgets\(\): void;/);
  const rollup = await fixture.read(FIXTURE_ROLLUP);
  t.regex(rollup, /export declare function makeWidget\(name: string\): Widget;/);
  t.notRegex(rollup, /declare function resetWidgets/);
  t.false(existsSync(join(fixture.dir, 'private-pkg/private.api.md')), 'a private package has no report');

  // A public declaration may not name an @internal one: its consumers could not name it either.
  await fixture.declare(`/** @internal */
export interface Gear {
    teeth: number;
}
/** A widget's gear. */
export declare function gearOf(name: string): Gear;
`);
  const leaking = await fixture.reports('--update');
  t.is(leaking.code, 1, leaking.summary);
  t.regex(leaking.stderr, /ae-incompatible-release-tags\) The symbol "gearOf" is marked as @public, but its signature references "Gear" which is marked as @internal/);
});

test('a public export naming a type that is not exported fails the check; one named only by an @internal member does not', async (t) => {
  t.timeout(FIXTURE_TIMEOUT_MS);
  const fixture = await apiFixture(t);
  // As tsc emits a module with a declaration it does not export: `export {}` keeps it unexported.
  await fixture.declare(`interface Hidden {
    secret: string;
}
/** A widget, by name. */
export declare class Widget {
    /** @internal */
    readonly hidden: Hidden;
}
export {};
`);
  const internalOnly = await fixture.reports('--update');
  t.is(internalOnly.code, 0, internalOnly.summary);

  await fixture.declare(`interface Hidden {
    secret: string;
}
/** A widget, by name. */
export declare class Widget {
    readonly hidden: Hidden;
}
export {};
`);
  const publicUse = await fixture.reports('--update');
  t.is(publicUse.code, 1, publicUse.summary);
  t.regex(publicUse.stderr, new RegExp(`${FIXTURE_PACKAGE}: API Extractor found problems`));
  t.regex(publicUse.stderr, /ae-forgotten-export\) The symbol "Hidden"/);
});
