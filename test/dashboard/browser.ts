import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium, which `.ci/run` installs when it is missing. */
export const CHROMIUM = process.env.BATON_CHROMIUM ?? '/usr/bin/chromium';

/** Where the browser tests leave their screenshots (gitignored). */
export const ARTIFACTS_DIR = fileURLToPath(new URL('../../../test-artifacts/', import.meta.url));

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A real Chromium with a fresh profile at laptop width, closed (and its profile removed) after the test. */
export async function openBrowser(t: ExecutionContext): Promise<{ context: BrowserContext; page: Page; pageErrors: string[] }> {
  const profile = await mkdtemp(join(tmpdir(), 'baton-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1366, height: 900 },
  });
  context.setDefaultTimeout(30_000);
  t.teardown(async () => {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // Script errors on the page, for the test to assert none: a blank page must never pass for a working one.
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return { context, page, pageErrors };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
