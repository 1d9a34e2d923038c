import { readFileSync } from 'node:fs';

/** Which code a member runs: what its member report and `baton_build_info` say. */
export interface BuildInfo {
  /** The `version` of the project's package.json. */
  version: string;
  /** The git commit the build was made from (`npm run build` records it), or `unknown`. */
  build: string;
  /** The Node.js version running the member (`process.version`). */
  nodeVersion: string;
}

const UNKNOWN = 'unknown';

function readJson(url: URL): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(url, 'utf8'));
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function textOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value.length > 0 && value.length <= 128 ? value : fallback;
}

/**
 * Read once, when the module loads (a member's start), never per request: the package's version
 * and the build record `scripts/write-build-info.mjs` leaves beside the compiled output
 * (framework/http/dist/build-info.json). A build made without it (a bare `tsc`) reports `unknown`.
 */
const resolved: BuildInfo = Object.freeze({
  version: textOr(readJson(new URL('../package.json', import.meta.url))?.version, UNKNOWN),
  build: textOr(readJson(new URL('./build-info.json', import.meta.url))?.build, UNKNOWN),
  nodeVersion: process.version,
});

export function buildInfo(): BuildInfo {
  return resolved;
}
