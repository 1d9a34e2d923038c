import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The files of the built page, by the name they are served under, with their media types. */
export const DASHBOARD_FILES = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
} as const;

export type DashboardFile = keyof typeof DASHBOARD_FILES;

/** Where `npm run build` puts the bundle: next to this module in dist/. */
export const DASHBOARD_BUILD_DIR = fileURLToPath(new URL('./ui/', import.meta.url));

export interface DashboardAsset {
  body: Buffer;
  contentType: string;
}

/**
 * The built page, read once: a fixed set of small files served from memory, so no request
 * names a path on disk. Undefined when the bundle was not built (the router then says so).
 */
export function loadDashboardAssets(dir = DASHBOARD_BUILD_DIR): Map<DashboardFile, DashboardAsset> | undefined {
  const assets = new Map<DashboardFile, DashboardAsset>();
  for (const [name, contentType] of Object.entries(DASHBOARD_FILES) as [DashboardFile, string][]) {
    try {
      assets.set(name, { body: readFileSync(`${dir}${name}`), contentType });
    } catch {
      return undefined;
    }
  }
  return assets;
}
