import type { GeneratedFile } from './template-files.js';

const BATON_IMPORT = /\bfrom\s+'(@baton\/[a-z0-9-]+)'/g;

/**
 * The generated package.json with the @baton/* packages the project imports: those its src/
 * imports as dependencies, those only its test/ imports (the conformance suites, a redis-server
 * launcher) as devDependencies, every one at `range`. Read from the rendered files themselves, so
 * a template or a plugin choice that imports another package brings it along, and nothing unused.
 */
export function withBatonDependencies(files: readonly GeneratedFile[], range: string): GeneratedFile[] {
  const runtime = new Set<string>();
  const dev = new Set<string>();
  for (const file of files) {
    if (!file.path.endsWith('.ts')) continue;
    const into = file.path.startsWith('test/') ? dev : runtime;
    for (const match of file.content.matchAll(BATON_IMPORT)) into.add(match[1]);
  }
  for (const name of runtime) dev.delete(name);
  return files.map((file) => {
    if (file.path !== 'package.json') return file;
    const manifest = JSON.parse(file.content) as Record<string, unknown>;
    manifest.dependencies = withRanges(manifest.dependencies, runtime, range);
    manifest.devDependencies = withRanges(manifest.devDependencies, dev, range);
    return { ...file, content: `${JSON.stringify(manifest, null, 2)}\n` };
  });
}

function withRanges(existing: unknown, names: ReadonlySet<string>, range: string): Record<string, string> {
  const merged: Record<string, string> = { ...(existing as Record<string, string> | undefined) };
  for (const name of names) merged[name] = range;
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => (a < b ? -1 : 1)));
}
