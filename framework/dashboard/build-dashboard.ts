// Bundles the dashboard page (framework/dashboard/web) into framework/dashboard/dist/ui/ with
// esbuild: one script, one style sheet, one HTML file, no CDN. Run by `npm run build` after tsc.
import { copyFile, mkdir, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { DASHBOARD_BUILD_DIR } from './dashboard-assets.js';

const source = fileURLToPath(new URL('../web/', import.meta.url));
/** A page of this size loads at once on any laptop; a bundle past it means a dependency crept in. */
const MAX_BUNDLE_BYTES = 200 * 1024;

await mkdir(DASHBOARD_BUILD_DIR, { recursive: true });
await build({
  entryPoints: [`${source}main.tsx`],
  outfile: `${DASHBOARD_BUILD_DIR}app.js`,
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  logLevel: 'warning',
});
await copyFile(`${source}index.html`, `${DASHBOARD_BUILD_DIR}index.html`);
await copyFile(`${source}app.css`, `${DASHBOARD_BUILD_DIR}app.css`);
const { size } = await stat(`${DASHBOARD_BUILD_DIR}app.js`);
if (size > MAX_BUNDLE_BYTES) {
  console.error(`the dashboard bundle is ${size} bytes, more than the ${MAX_BUNDLE_BYTES} it may take`);
  process.exit(1);
}
