import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { ALERT_RULES_FILE, DASHBOARD_FILE, PROMTOOL } from './observability-files.js';

const run = promisify(execFile);
const FRAMEWORK_DIR = fileURLToPath(new URL('../../../../framework/', import.meta.url));
const HISTOGRAM_SUFFIX = /_(bucket|count|sum)$/;

/** Every metric name registered under framework/ (`name: 'baton_...'`, or given to a gauge factory as `'baton_...'`). */
async function registeredMetricNames(): Promise<Set<string>> {
  const names = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.name.endsWith('.ts')) {
        for (const match of (await readFile(path, 'utf8')).matchAll(/'(baton_[a-z_]+)'/g)) names.add(match[1]);
      }
    }
  };
  await walk(FRAMEWORK_DIR);
  return names;
}

const namesIn = (text: string) => new Set([...text.matchAll(/\bbaton_[a-z_]+\b/g)].map((m) => m[0].replace(HISTOGRAM_SUFFIX, '')));

test('promtool accepts the shipped alert rules', async (t) => {
  const { stdout } = await run(PROMTOOL, ['check', 'rules', ALERT_RULES_FILE]);
  t.regex(stdout, /SUCCESS: \d+ rules found/);
  const rules = await readFile(ALERT_RULES_FILE, 'utf8');
  const alerts = [...rules.matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]);
  for (const wanted of ['BatonNodeDown', 'BatonNoLeader', 'BatonTermChurn', 'BatonEventLoopDelayHigh', 'BatonConnectionRefusalsHigh', 'BatonStorageCorruption', 'BatonTransfersStuck']) {
    t.true(alerts.includes(wanted), `${wanted} is among the rules`);
  }
});

test('the alert rules and the dashboard name only metrics the framework registers', async (t) => {
  const registered = await registeredMetricNames();
  t.true(registered.has('baton_build_info') && registered.has('baton_consensus_term'), 'the scan finds the registrations');
  const rules = namesIn(await readFile(ALERT_RULES_FILE, 'utf8'));
  const dashboardText = await readFile(DASHBOARD_FILE, 'utf8');
  const dashboard = namesIn(dashboardText);
  t.true(rules.size >= 6 && dashboard.size >= 12);
  for (const name of [...rules, ...dashboard]) t.true(registered.has(name), `${name} is registered under framework/`);
  const parsed = JSON.parse(dashboardText) as { panels: { type: string; targets?: { expr: string }[] }[] };
  for (const panel of parsed.panels.filter((p) => p.type !== 'row')) t.true((panel.targets ?? []).length > 0, 'every panel queries something');
});
