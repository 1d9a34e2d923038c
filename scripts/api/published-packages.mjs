// The packages a release publishes and that have a TypeScript surface: every workspace of the
// root package.json that is not private and whose "." export names declarations. (@baton/templates
// is published too, but ships files for `baton new`, not modules: it has no API to report.)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * @typedef {object} PublishedPackage
 * @property {string} name        the package name, `@baton/kernel`
 * @property {string} folder      its folder, relative to the checkout, `framework/kernel`
 * @property {string} dir         its folder, absolute
 * @property {string} entryPoint  the full declarations tsc emits, absolute (dist/index.d.ts)
 * @property {string} report      its API report, absolute (<unscoped-name>.api.md beside package.json)
 */

/** @returns {{ withApi: PublishedPackage[] }} */
export function publishedPackages(checkout, workspaceFolders = rootWorkspaces(checkout)) {
  const withApi = [];
  for (const folder of workspaceFolders) {
    const dir = join(checkout, folder);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    if (manifest.private === true) continue;
    if (!manifest.exports?.['.']) continue;
    withApi.push({
      name: manifest.name,
      folder,
      dir,
      entryPoint: join(dir, 'dist', 'index.d.ts'),
      report: join(dir, `${unscoped(manifest.name)}.api.md`),
    });
  }
  return { withApi };
}

export function rootWorkspaces(checkout) {
  return JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')).workspaces;
}

export function unscoped(name) {
  return name.replace(/^@[^/]+\//, '');
}

export function missingEntryPoints(packages) {
  return packages.filter((p) => !existsSync(p.entryPoint)).map((p) => p.name);
}
