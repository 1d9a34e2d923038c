import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { outputPath, renderTemplate } from './render.js';

/** One file of a project about to be generated: where it goes (relative) and what it holds. */
export interface GeneratedFile {
  path: string;
  content: string;
  /** It holds a secret (the admin token): created 0600, readable by its owner only. */
  private?: boolean;
}

/**
 * Reads template layers (directories of template sources) and renders them. A later layer's
 * file replaces an earlier one's at the same output path, so a variant can override a common
 * file. Paths and contents are both rendered. The result is sorted by path.
 */
export async function renderLayers(
  layers: readonly string[],
  values: Readonly<Record<string, string>>,
): Promise<GeneratedFile[]> {
  const byPath = new Map<string, GeneratedFile>();
  for (const layer of layers) {
    for (const file of await listFiles(layer)) {
      const source = relative(layer, file).split(sep).join('/');
      const where = `${layer}/${source}`;
      const path = renderTemplate(outputPath(source), values, where);
      const content = renderTemplate(await readFile(file, 'utf8'), values, where);
      byPath.set(path, { path, content });
    }
  }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function listFiles(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    throw new Error(`template directory ${dir} cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}
