import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** The repository's docs/observability/ (tests run from dist/test/...). */
export const OBSERVABILITY_DIR = fileURLToPath(new URL('../../../../docs/observability/', import.meta.url));
export const ALERT_RULES_FILE = `${OBSERVABILITY_DIR}baton-alerts.yml`;
export const DASHBOARD_FILE = `${OBSERVABILITY_DIR}baton-dashboard.json`;

/** The Prometheus executables: $PROMETHEUS / $PROMTOOL, else Debian's on the PATH (.ci/run installs them). */
export const PROMETHEUS = process.env.PROMETHEUS ?? 'prometheus';
export const PROMTOOL = process.env.PROMTOOL ?? 'promtool';

/**
 * The alert rules with every `for:` shortened to `seconds`: the expressions stay as shipped, a
 * test only waits less for them to hold.
 */
export async function rulesWithShortFor(seconds: number): Promise<string> {
  return (await readFile(ALERT_RULES_FILE, 'utf8')).replace(/^(\s+for:) \S+$/gm, `$1 ${seconds}s`);
}
