import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, type Run } from './processes.js';
import { CHECKOUT } from './workspaces.js';

/** The package a fixture checkout holds, and the report and rollup the script makes for it. */
export const FIXTURE_PACKAGE = '@fixture/widgets';
export const FIXTURE_REPORT = 'pkg/widgets.api.md';
export const FIXTURE_ROLLUP = 'pkg/dist/index.public.d.ts';

/** What tsc would emit for the fixture package: one public function, one @internal one. */
export const FIXTURE_DECLARATIONS = `/** A widget, by name. */
export interface Widget {
    name: string;
}
/** Makes a widget. */
export declare function makeWidget(name: string): Widget;
/**
 * For the package's own tests.
 *
 * @internal
 */
export declare function resetWidgets(): void;
`;

export interface ApiFixture {
  dir: string;
  /** Runs scripts/api-reports.mjs of this checkout on the fixture checkout. */
  reports(mode: '--check' | '--update' | '--rollups'): Promise<Run>;
  /** Replaces the fixture package's emitted declarations, as a rebuild would. */
  declare(text: string): Promise<void>;
  read(path: string): Promise<string>;
}

/**
 * A checkout of one published package, made in a temp dir: the real tsconfig.base.json and
 * api-extractor.json, the declarations written as tsc emits them (no build needed), node_modules
 * linked to this checkout's. Nothing of the real tree is written.
 */
export async function apiFixture(t: { teardown(fn: () => Promise<void>): void }): Promise<ApiFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-api-fixture-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'fixture', private: true, workspaces: ['pkg', 'private-pkg'] }),
  );
  for (const file of ['tsconfig.base.json', 'api-extractor.json'])
    await cp(join(CHECKOUT, file), join(dir, file));
  await symlink(join(CHECKOUT, 'node_modules'), join(dir, 'node_modules'));
  await mkdir(join(dir, 'pkg/dist'), { recursive: true });
  await writeFile(
    join(dir, 'pkg/package.json'),
    JSON.stringify({
      name: FIXTURE_PACKAGE,
      version: '0.1.0',
      type: 'module',
      exports: { '.': { types: './dist/index.public.d.ts', default: './dist/index.js' } },
    }),
  );
  // A private workspace is no published package: it gets no report.
  await mkdir(join(dir, 'private-pkg/dist'), { recursive: true });
  await writeFile(
    join(dir, 'private-pkg/package.json'),
    JSON.stringify({ name: '@fixture/private', private: true, exports: { '.': './dist/index.js' } }),
  );
  const fixture: ApiFixture = {
    dir,
    reports: (mode) =>
      run(process.execPath, [join(CHECKOUT, 'scripts/api-reports.mjs'), mode, '--checkout', dir], {
        cwd: dir,
        timeoutMs: 120_000,
      }),
    declare: (text) => writeFile(join(dir, 'pkg/dist/index.d.ts'), text),
    read: (path) => readFile(join(dir, path), 'utf8'),
  };
  await fixture.declare(FIXTURE_DECLARATIONS);
  return fixture;
}
