/**
 * Chromium driven by playwright-core: the system's when it has one, else the
 * build that ships inside the @sparticuz/chromium dev dependency, so a fresh
 * machine needs nothing but `npm ci`. One browser per test file, a fresh
 * profile directory, and every console message and page error of a page
 * collected for assertions.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** A browser named by the caller, else the system's chromium when it has one. */
const SYSTEM_CHROMIUM = process.env.PTC_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots of the main states, kept as test artefacts (ignored by git). */
export const ARTIFACTS = new URL('./artifacts/', import.meta.url).pathname;
/** The built page: `npm test` builds it first (pretest). */
export const BUILT_PAGE = new URL('../../playground/dist/index.html', import.meta.url).pathname;

export interface Launched {
  context: BrowserContext;
  close(): Promise<void>;
}

interface Browser {
  executablePath: string;
  args: string[];
}

async function findBrowser(): Promise<Browser> {
  if (existsSync(SYSTEM_CHROMIUM)) return { executablePath: SYSTEM_CHROMIUM, args: [] };
  if (process.env.PTC_CHROMIUM !== undefined) throw new Error(`no chromium at ${SYSTEM_CHROMIUM} (PTC_CHROMIUM): point it at a chromium binary or unset it`);
  // The packaged build unpacks itself into the temp directory once and reuses it after; its flags
  // (single process, no zygote) are the ones it is built to run with.
  const packaged = (await import('@sparticuz/chromium')).default;
  return { executablePath: await packaged.executablePath(), args: packaged.args };
}

export async function launch(): Promise<Launched> {
  const browser = await findBrowser();
  if (!existsSync(BUILT_PAGE)) throw new Error('the playground is not built: npm run build:playground (npm test does it first)');
  const profile = await mkdtemp(path.join(tmpdir(), 'ptc-chromium-'));
  // A fresh --user-data-dir: playwright takes it as the persistent context's directory.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: browser.executablePath,
    viewport: { width: 1400, height: 900 },
    args: [
      ...browser.args,
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export interface WatchedPage {
  page: Page;
  /** Console errors and warnings, page errors and CSP violations, in order. */
  problems: string[];
}

export async function openPage(context: BrowserContext, url: string): Promise<WatchedPage> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  // A CSP violation is also logged, but this names the directive and the source.
  await page.exposeFunction('reportCspViolation', (text: string) => problems.push(`csp: ${text}`));
  await page.addInitScript(`document.addEventListener('securitypolicyviolation', (event) => {
    window.reportCspViolation(event.violatedDirective + ' ' + event.blockedURI + ' ' + event.sourceFile + ':' + event.lineNumber);
  });`);
  await page.goto(url);
  await page.locator('body[data-ready="true"]').waitFor();
  return { page, problems };
}

/**
 * Resolves once the page's TypeScript worker holds the typings (the page marks it). Each page
 * starts a worker of its own, and its completions and diagnostics wait for that; an editor test
 * waits for it before typing, so that its own waits cover the answer to what it typed.
 */
export async function typesReady(page: Page): Promise<void> {
  await page.waitForFunction(() => performance.getEntriesByName('playground-types-ready').length > 0);
}
