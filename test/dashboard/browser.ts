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

/** A failure the test expects (a wrong token refused): its answer and the console line about it are not reported. */
export interface ExpectedFailure {
  status: number;
  /** The path (and query) the page asked for. */
  path: string;
}

/**
 * What went wrong on the page: script errors, console errors, answers of 400 and more to
 * anything the page asked for, and requests that got no answer. A working page has none; a
 * test that expects one says which with `expect`.
 */
export class PageProblems {
  private readonly seen: string[] = [];
  private readonly expected: ExpectedFailure[] = [];
  private readonly tolerated: { status: number; path: RegExp }[] = [];
  private readonly failedUrls = new Set<string>();

  constructor(page: Page) {
    page.on('pageerror', (error) => this.seen.push(`script error: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() < 400) return;
      const url = new URL(response.url());
      if (this.isExpected(response.status(), url)) {
        this.failedUrls.add(response.url());
        return;
      }
      this.seen.push(`${response.request().method()} ${url.pathname}${url.search} answered ${response.status()}`);
    });
    page.on('requestfailed', (request) => {
      const failure = request.failure()?.errorText ?? 'no answer';
      // A poll cut short by the page itself (a logout, a navigation) is not a failure of the node.
      if (failure === 'net::ERR_ABORTED') return;
      const url = new URL(request.url());
      this.seen.push(`${request.method()} ${url.pathname}${url.search} failed: ${failure}`);
    });
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      // Chromium logs each failed resource too; an expected one is not reported twice.
      const at = message.location().url;
      if (/^Failed to load resource/.test(message.text()) && this.failedUrls.has(at)) return;
      this.seen.push(`console error: ${message.text()}${at ? ` (${at})` : ''}`);
    });
  }

  /** Expects one failing answer (once per call): the refusal a test provokes on purpose. */
  expect(failure: ExpectedFailure): void {
    this.expected.push(failure);
  }

  /**
   * From now on, answers of `status` to paths matching `path` are what the test provokes (a
   * cluster that lost its quorum refusing reads): not reported, however many.
   */
  tolerate(status: number, path: RegExp): void {
    this.tolerated.push({ status, path });
  }

  /** Everything unexpected so far. */
  get list(): readonly string[] {
    return [...this.seen];
  }

  private isExpected(status: number, url: URL): boolean {
    if (this.tolerated.some((e) => e.status === status && e.path.test(`${url.pathname}${url.search}`))) return true;
    const i = this.expected.findIndex((e) => e.status === status && e.path === `${url.pathname}${url.search}`);
    if (i === -1) return false;
    this.expected.splice(i, 1);
    return true;
  }
}

/** A real Chromium with a fresh profile at laptop width, closed (and its profile removed) after the test. */
export async function openBrowser(
  t: ExecutionContext,
  options: {
    /** For a cluster serving certificates of its own CA, which this fresh profile does not trust. */
    ignoreHTTPSErrors?: boolean;
  } = {},
): Promise<{ context: BrowserContext; page: Page; problems: PageProblems }> {
  const profile = await mkdtemp(join(tmpdir(), 'baton-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1366, height: 900 },
    ignoreHTTPSErrors: options.ignoreHTTPSErrors ?? false,
  });
  context.setDefaultTimeout(30_000);
  t.teardown(async () => {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // A blank page, a 404 poll or a console error must never pass for a working page.
  const problems = new PageProblems(page);
  return { context, page, problems };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
