import { readFile, readdir } from 'node:fs/promises';
import { join, posix, relative } from 'node:path';
import test from 'ava';
import { entryPoints, packedTarballs, type Tarball } from './packed-files.js';
import { workspaces } from './workspaces.js';

// What each published @baton/* tarball holds, from `npm pack --dry-run`: what a user installs.

const tarballs = packedTarballs();

/** Every file under `dir` on disk, relative to `base`, with / separators. */
async function filesOnDisk(dir: string, base: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await filesOnDisk(path, base)));
    else found.push(relative(base, path).split('\\').join('/'));
  }
  return found;
}

const read = (tarball: Tarball, file: string) =>
  readFile(join(tarball.workspace.dir, file), 'utf8');

test('every workspace but the private @baton/testing is packed, and no packed one depends on it', async (t) => {
  const packed = await tarballs;
  for (const tarball of packed) {
    t.log(
      `${tarball.name}: ${tarball.files.size} files, ${(tarball.unpackedSize / 1000).toFixed(1)} kB unpacked`,
    );
  }
  const testing = workspaces().find((w) => w.manifest.name === '@baton/testing');
  t.is(testing?.manifest.private, true, '@baton/testing is private: npm refuses to publish it');
  t.deepEqual(
    packed.map((p) => p.name).sort(),
    workspaces()
      .filter((w) => w.manifest.name !== '@baton/testing')
      .map((w) => w.manifest.name)
      .sort(),
  );
  for (const { name, workspace } of packed) {
    const { dependencies = {}, peerDependencies = {} } = workspace.manifest;
    t.false(
      '@baton/testing' in { ...dependencies, ...peerDependencies },
      `${name} would not install without @baton/testing`,
    );
  }
});

test('every declaration a package names (types, exports) is in its tarball, with every declaration it imports', async (t) => {
  for (const tarball of await tarballs) {
    const pending = entryPoints(tarball.workspace).types;
    const seen = new Set<string>();
    while (pending.length > 0) {
      const file = pending.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      t.true(tarball.files.has(file), `${tarball.name}: ${file} is not packed`);
      if (!tarball.files.has(file)) continue;
      for (const [, spec] of (await read(tarball, file)).matchAll(
        /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g,
      )) {
        pending.push(
          posix.join(
            posix.dirname(file),
            spec.replace(/\.js$/, '.d.ts').replace(/\.mjs$/, '.d.mts'),
          ),
        );
      }
    }
    if (tarball.name !== '@baton/templates')
      t.true(seen.size > 1, `${tarball.name} names its declarations`);
  }
});

test("a consumer's types are the packed public rollup, the full declarations only under baton-internal", async (t) => {
  let rollups = 0;
  for (const tarball of await tarballs) {
    const { manifest } = tarball.workspace;
    const main = (manifest.exports as Record<string, unknown> | undefined)?.['.'] as
      | { types?: string; 'baton-internal'?: { types?: string } }
      | undefined;
    if (!main) continue;
    rollups++;
    t.is(manifest.types, './dist/index.public.d.ts', `${tarball.name}: types`);
    t.is(main.types, './dist/index.public.d.ts', `${tarball.name}: exports["."].types`);
    t.is(main['baton-internal']?.types, './dist/index.d.ts', `${tarball.name}: under baton-internal`);
    t.deepEqual(
      Object.keys(main),
      ['baton-internal', 'types', 'default'],
      `${tarball.name}: the condition comes first, as Node and tsc take the first that matches`,
    );
    t.true(tarball.files.has('dist/index.public.d.ts'), `${tarball.name}: the rollup is packed`);
    t.true(tarball.files.has('dist/index.d.ts'), `${tarball.name}: the full declarations are packed`);
    if (tarball.files.has('dist/index.public.d.ts'))
      t.notRegex(
        await read(tarball, 'dist/index.public.d.ts'),
        /@internal/,
        `${tarball.name}: the rollup declares nothing @internal`,
      );
  }
  t.true(rollups >= 10);
});

test('every entry point a manifest names (exports, main, bin) is in its tarball, and every bin starts with a shebang', async (t) => {
  for (const tarball of await tarballs) {
    for (const file of entryPoints(tarball.workspace).runtime)
      t.true(tarball.files.has(file), `${tarball.name}: ${file}`);
    const { bin } = tarball.workspace.manifest;
    for (const file of typeof bin === 'string' ? [bin] : Object.values(bin ?? {})) {
      t.regex(
        await read(tarball, file),
        /^#!\/usr\/bin\/env node\n/,
        `${tarball.name}: ${file} runs as a command`,
      );
    }
  }
});

test('no tarball holds compiled tests or TypeScript sources, only declarations (the templates are data)', async (t) => {
  for (const tarball of await tarballs) {
    if (tarball.name === '@baton/templates') continue;
    for (const file of tarball.files) {
      t.false(
        /(^|\/)(test|tests|__tests__)\//.test(file) || /\.(test|spec)\.[cm]?js$/.test(file),
        `${tarball.name}: a test, ${file}`,
      );
      t.false(
        /\.[cm]?ts$/.test(file) && !/\.d\.[cm]?ts$/.test(file),
        `${tarball.name}: a source, ${file}`,
      );
    }
  }
});

test('@baton/templates holds every template file as it is on disk, and nothing else', async (t) => {
  const templates = (await tarballs).find((p) => p.name === '@baton/templates')!;
  const onDisk = [
    ...(await filesOnDisk(join(templates.workspace.dir, 'host'), templates.workspace.dir)),
    ...(await filesOnDisk(join(templates.workspace.dir, 'plugin'), templates.workspace.dir)),
  ];
  t.true(
    onDisk.includes('plugin/files/common/gitignore'),
    'kept without its dot, which npm would drop',
  );
  t.deepEqual(
    [...templates.files].sort(),
    [...onDisk, 'CHANGELOG.md', 'README.md', 'package.json'].sort(),
  );
});

test('every file a packed module reads beside itself (new URL(..., import.meta.url)) is packed', async (t) => {
  let references = 0;
  for (const tarball of await tarballs) {
    for (const file of [...tarball.files].filter((f) => f.endsWith('.js'))) {
      for (const [, spec] of (await read(tarball, file)).matchAll(
        /new URL\(\s*['"]([^'"]+)['"]\s*,\s*import\.meta\.url\s*\)/g,
      )) {
        references++;
        const target = posix.join(posix.dirname(file), spec);
        t.false(
          target.startsWith('..'),
          `${tarball.name}: ${file} reads ${spec}, outside the package`,
        );
        if (!spec.endsWith('/')) {
          t.true(
            tarball.files.has(target),
            `${tarball.name}: ${file} reads ${target}, which is not packed`,
          );
          continue;
        }
        const beside = await filesOnDisk(
          join(tarball.workspace.dir, target),
          tarball.workspace.dir,
        );
        t.true(beside.length > 0, `${tarball.name}: ${target} is empty: build it first`);
        for (const asset of beside)
          t.true(
            tarball.files.has(asset),
            `${tarball.name}: ${file} reads ${asset}, which is not packed`,
          );
      }
    }
  }
  // The build record and package.json of @baton/http, the dashboard bundle of @baton/dashboard.
  t.true(references >= 3);
});
