/**
 * The playground page in a real browser (chromium via playwright-core)
 * against a real server on port 0. Screenshots of the main states go to
 * test/playground/artifacts/ (ignored by git).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { startServer, type Running } from '../services/helpers.ts';
import { ARTIFACTS, launch, openPage, typesReady, type Launched, type WatchedPage } from './browser.ts';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const TOKEN = 'playground-test-token-0123456789';
const b64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const shot = (page: Page, name: string) => page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
const editorText = (page: Page) => page.getByTestId('editor').locator('.cm-content').innerText();
/** The page's document, typed just enough (the project's types have no DOM). */
type InPage = { document: { querySelectorAll(selector: string): { length: number } } };
/** Resolves once `selector` matches exactly `count` elements. (waitForFunction needs a function: the CSP forbids eval.) */
const countIs = (page: Page, selector: string, count: number) =>
  page.waitForFunction(([s, n]) => (globalThis as unknown as InPage).document.querySelectorAll(s).length === n, [selector, count] as const);

let browser: Launched;
let open: Running;
let closed: Running;
const pages: WatchedPage[] = [];

async function visit(server: Running, fragment = ''): Promise<WatchedPage> {
  const watched = await openPage(browser.context, `${server.url}/${fragment}`);
  pages.push(watched);
  return watched;
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  [browser, open, closed] = await Promise.all([launch(), startServer(), startServer({ token: TOKEN })]);
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([open?.server.close(), closed?.server.close()]);
});

describe('serving', () => {
  it('serves the page at / and /playground without a token, under a strict CSP', async () => {
    for (const path of ['/', '/playground', '/playground/']) {
      const response = await fetch(`${closed.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await response.text();
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      // Each response has its own style nonce, written into the page.
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
      expect(nonce).toBeDefined();
      expect(html).toContain(`nonce="${nonce}"`);
      expect(html).not.toContain('PTC_CSP_NONCE');
    }
    // The API still needs the token.
    expect((await fetch(`${closed.url}/v1/typings`)).status).toBe(401);
  });

  it('serves hashed assets compressed, and nothing outside its table', async () => {
    const html = await (await fetch(`${open.url}/`)).text();
    const script = /src="(\/playground\/assets\/[^"]+\.js)"/.exec(html)?.[1] as string;
    const gz = await fetch(`${closed.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.status).toBe(200);
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(gz.headers.get('cache-control')).toContain('immutable');
    expect(gz.headers.get('x-content-type-options')).toBe('nosniff');
    const plain = await fetch(`${open.url}${script}`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect((await fetch(`${open.url}/playground/assets/..%2f..%2fpackage.json`)).status).toBe(404);
    expect((await fetch(`${open.url}/playground/assets/nothing.js`)).status).toBe(404);
  });

  it('keeps the whole bundle within 1.5 MB compressed', () => {
    const sizes = JSON.parse(readFileSync(new URL('../../playground/dist/sizes.json', import.meta.url), 'utf8')) as Record<string, { gzip: number; br: number }>;
    const gzip = Object.values(sizes).reduce((sum, s) => sum + s.gzip, 0);
    expect(gzip).toBeLessThanOrEqual(1.5 * 1024 * 1024);
    expect(gzipSync(Buffer.from('x')).length).toBeGreaterThan(0);
  });
});

describe('editor', () => {
  it('completes `tools.` with the built-in tool names and shows parameter types', async () => {
    const { page } = await visit(open, `#code=${b64url('')}`);
    await typesReady(page);
    await page.getByTestId('editor').locator('.cm-content').click();
    await page.keyboard.type('const r = await tools.');
    const labels = page.locator('.cm-tooltip-autocomplete .cm-completionLabel');
    await labels.filter({ hasText: /^glob$/ }).waitFor();
    expect(await labels.allInnerTexts()).toEqual(['edit', 'glob', 'grep', 'read', 'write']);
    await shot(page, 'completion');
    await page.keyboard.type('glob({ ');
    const signature = page.getByTestId('signature');
    await signature.waitFor();
    expect(await signature.innerText()).toContain('pattern: string');
    await shot(page, 'signature');
  });

  it('marks a wrong argument type before running', async () => {
    const { page } = await visit(open, `#code=${b64url('const r = await tools.glob({ pattern: 42 });\nreturn r;')}`);
    await typesReady(page);
    const mark = page.getByTestId('editor').locator('.cm-lintRange-error');
    await mark.filter({ hasText: 'pattern' }).waitFor();
    expect(await mark.allInnerTexts()).toEqual(['pattern']);
    expect(await page.getByTestId('timeline-row').count()).toBe(0);
    await shot(page, 'type-error');
  });
});

describe('running', () => {
  it('shows one timeline row per nested call of a Promise.all, overlapping, then the logs and the result', async () => {
    const code = [
      "console.log('start');",
      'const found = await Promise.all([',
      "  tools.glob({ pattern: '*.a' }),",
      "  tools.glob({ pattern: '*.b' }),",
      "  tools.grep({ pattern: 'x' }),",
      ']);',
      "console.log('done');",
      'return { count: found.length };',
    ].join('\n');
    const { page, problems } = await visit(open, `#code=${b64url(code)}`);
    // Ctrl+Enter from the editor runs the program.
    await page.getByTestId('editor').locator('.cm-content').click();
    await page.keyboard.press('Control+Enter');
    await page.getByTestId('result').waitFor();
    await countIs(page, '[data-testid="timeline-row"][data-state="ok"]', 3);
    const rows = page.getByTestId('timeline-row');
    expect(await rows.evaluateAll((els) => els.map((el) => el.getAttribute('data-tool')))).toEqual(['glob', 'glob', 'grep']);
    // A waterfall: all three started before any ended.
    const seqs = await rows.evaluateAll((els) => els.map((el) => [Number(el.getAttribute('data-start-seq')), Number(el.getAttribute('data-end-seq'))]));
    expect(Math.max(...seqs.map(([start]) => start))).toBeLessThan(Math.min(...seqs.map(([, end]) => end)));
    expect(await page.getByTestId('logs').innerText()).toBe('start\ndone\n');
    expect(await page.getByTestId('result').innerText()).toContain('"count": 3');
    expect(await page.getByTestId('error').isHidden()).toBe(true);
    // A row expands to its rendered content.
    await rows.first().locator('summary').click();
    expect(await rows.first().locator('.call-content').innerText()).toContain('isError: false');
    await shot(page, 'run-result');
    expect(problems).toEqual([]);
  });

  it("draws the time a call waited for its turn ahead of its bar, from the run's stats", async () => {
    // write is exclusive: of two writes issued together, the second waits for the first.
    const code = [
      'await Promise.all([',
      "  tools.write({ file_path: 'queued-1.txt', content: 'one' }),",
      "  tools.write({ file_path: 'queued-2.txt', content: 'two' }),",
      ']);',
      "return 'written';",
    ].join('\n');
    const { page, problems } = await visit(open, `#code=${b64url(code)}`);
    await page.getByTestId('run').click();
    await page.getByTestId('result').waitFor();
    await countIs(page, '[data-testid="timeline-row"][data-queued-ms]', 1);
    const rows = page.getByTestId('timeline-row');
    const queued = await rows.evaluateAll((els) => els.map((el) => el.getAttribute('data-queued-ms')));
    expect(queued[0]).toBeNull();
    expect(Number(queued[1])).toBeGreaterThan(0);
    // Drawn: the second row's queued part has a width and ends where its bar begins; the first row's is not shown.
    const second = rows.nth(1);
    const part = await second.getByTestId('call-queued').boundingBox();
    const bar = await second.locator('.call-bar').boundingBox();
    expect(part?.width).toBeGreaterThan(0);
    expect(Math.abs(part!.x + part!.width - bar!.x)).toBeLessThanOrEqual(3);
    // Laid out as the server measured: the second starts where the first ends, and waited while it ran.
    const firstBar = await rows.nth(0).locator('.call-bar').boundingBox();
    expect(Math.abs(firstBar!.x + firstBar!.width - bar!.x)).toBeLessThanOrEqual(3);
    expect(part!.x).toBeGreaterThanOrEqual(firstBar!.x - 1);
    expect(await rows.nth(0).getByTestId('call-queued').isHidden()).toBe(true);
    expect(await second.locator('.call-duration').innerText()).toMatch(/ · queued \d+ ms$/);
    // Under the result, each budget against its limit; none near it.
    const budgets = page.getByTestId('budgets');
    expect(await budgets.locator('[data-budget]').evaluateAll((els) => els.map((el) => el.getAttribute('data-budget')))).toEqual(['calls', 'heap', 'logs', 'result']);
    expect(await budgets.locator('[data-budget="calls"]').innerText()).toBe('calls 2 of 1000');
    expect(await budgets.locator('[data-budget="result"]').innerText()).toBe('result 9 B of 16.0 MiB');
    expect(await budgets.locator('[data-near]').count()).toBe(0);
    await shot(page, 'queued');
    expect(problems).toEqual([]);
  });

  it('marks a budget the run came near: logs close to maxLogBytes', async () => {
    const { page, problems } = await visit(open, `#code=${b64url("console.log('x'.repeat(900_000));\nreturn 1;")}`);
    await page.getByTestId('run').click();
    await page.getByTestId('result').waitFor();
    const budgets = page.getByTestId('budgets');
    expect(await budgets.locator('[data-near]').evaluateAll((els) => els.map((el) => el.getAttribute('data-budget')))).toEqual(['logs']);
    expect(await budgets.locator('[data-budget="logs"]').innerText()).toBe('logs 878.9 KiB of 1.0 MiB');
    expect(problems).toEqual([]);
  });

  it('shows context a tool injects for the next model request beside the logs, as it happens', async () => {
    open.server.core.registry.register(
      defineTool({
        name: 'remember',
        description: 'Leaves a note for the next model request.',
        parameters: { note: { type: 'string', required: true } },
        output: { schema: { type: 'null' }, render: () => [{ type: 'text', text: 'noted' }] },
        async execute(args, exec) {
          exec.agent?.inject({ content: args.note, source: { kind: 'plugin', plugin: 'notes' } });
          return null;
        },
      }),
    );
    const code = "console.log('before');\nawait tools.remember({ note: 'prefer metric units' });\nreturn 1;";
    const { page, problems } = await visit(open, `#code=${b64url(code)}`);
    await page.getByTestId('run').click();
    await page.getByTestId('result').waitFor();
    expect(await page.getByTestId('logs').innerText()).toBe('before\n[context from notes via remember] prefer metric units\n');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('cancels a long run: ABORTED', async () => {
    const code = "console.log('waiting');\nawait new Promise((resolve) => setTimeout(resolve, 120000));\nreturn 'late';";
    const { page } = await visit(open, `#code=${b64url(code)}`);
    await page.getByTestId('run').click();
    // The run is under way on the server once its first log line streamed back.
    await page.getByTestId('logs').getByText('waiting').waitFor();
    await shot(page, 'running');
    await page.getByTestId('cancel').click();
    const error = page.getByTestId('error');
    await error.waitFor();
    expect(await error.innerText()).toContain('ABORTED');
    expect(await page.getByTestId('run').isEnabled()).toBe(true);
    await shot(page, 'cancelled');
  });

  it('shows a syntax error with its code frame; its line:column moves the editor cursor', async () => {
    const { page } = await visit(open, `#code=${b64url('const a = 1;\nconst b = ;\nreturn a;')}`);
    await page.getByTestId('run').click();
    const error = page.getByTestId('error');
    await error.waitFor();
    const text = await error.innerText();
    expect(text).toContain('CODE_RUN_FAILED');
    expect(text).toContain('> 2 | const b = ;');
    expect(await page.getByTestId('editor').getAttribute('data-cursor')).toBe('1:1');
    await page.getByTestId('error-location').first().click();
    expect(await page.getByTestId('editor').getAttribute('data-cursor')).toBe('2:11');
    expect(await page.evaluate("document.activeElement.classList.contains('cm-content')")).toBe(true);
    await shot(page, 'syntax-error');
  });

  it('remembers the session id and pages that session’s events', async () => {
    const { page } = await visit(open, `#code=${b64url("for (let i = 0; i < 60; i++) await tools.glob({ pattern: 'p' + i }); return 1;")}`);
    await page.getByTestId('session').fill('pg-session-1');
    await page.getByTestId('session').press('Tab');
    await page.getByTestId('run').click();
    await page.getByTestId('result').waitFor();
    await page.reload();
    await page.locator('body[data-ready="true"]').waitFor();
    expect(await page.getByTestId('session').inputValue()).toBe('pg-session-1');
    await page.getByTestId('tab-events').click();
    // 60 calls: 121 events, 50 a page.
    await countIs(page, '[data-testid="event"]', 50);
    expect(await page.getByTestId('events').innerText()).toContain('tool/ptc-dispatch-start');
    await page.getByTestId('events-more').click();
    await countIs(page, '[data-testid="event"]', 100);
    await page.getByTestId('events-more').click();
    await countIs(page, '[data-testid="event"]', 121);
    expect(await page.getByTestId('events-more').isDisabled()).toBe(true);
    await page.getByTestId('tab-tools').click();
    await page.locator('[data-testid="tool"][data-tool="grep"]').waitFor();
    await page.getByTestId('tab-prompt').click();
    await page.locator('#prompt').getByText('tools.').first().waitFor();
    await shot(page, 'inspect');
  });
});

describe('access and sharing', () => {
  it('asks for the token, keeps it in sessionStorage only, and sends it on every API call', async () => {
    const apiRequests: { url: string; authorization?: string }[] = [];
    const { page } = await visit(closed);
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/v1/')) apiRequests.push({ url: request.url(), authorization: request.headers().authorization });
    });
    const banner = page.getByTestId('token-required');
    await banner.waitFor();
    await shot(page, 'token-required');
    await page.getByTestId('token').fill(TOKEN);
    await page.getByTestId('token').press('Enter');
    await banner.waitFor({ state: 'hidden' });
    await page.getByTestId('panel-typings').getByText('interface ToolArgsMap').waitFor();
    await page.getByTestId('run').click();
    await page.getByTestId('result').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('ptc.playground.token'))).toBe(TOKEN);
    expect(await page.evaluate(() => Object.values(localStorage).some((value) => value.includes('playground-test-token')))).toBe(false);
    expect(page.url()).not.toContain(TOKEN);
    expect(apiRequests.length).toBeGreaterThanOrEqual(2);
    for (const request of apiRequests) {
      expect(request.url).not.toContain(TOKEN);
      expect(request.authorization).toBe(`Bearer ${TOKEN}`);
    }
  });

  it('restores the program and settings from a shared link, and makes one', async () => {
    const code = "// héllo ✓ 🚀\nreturn 'shared';";
    const { page } = await visit(open, `#code=${b64url(code)}&timeout=4321`);
    expect(await editorText(page)).toBe(code);
    expect(await page.getByTestId('timeout').inputValue()).toBe('4321');
    await page.getByTestId('timeout').fill('1500');
    await page.getByTestId('share').click();
    const hash = new URL(page.url()).hash;
    expect(hash).toBe(`#code=${b64url(code)}&timeout=1500`);
  });
});

describe('accessibility', () => {
  it('follows the system’s dark theme, and its controls are labelled and reachable by keyboard', async () => {
    const { page } = await visit(open, `#code=${b64url('return 1;')}`);
    const background = () => page.evaluate('getComputedStyle(document.body).backgroundColor') as Promise<string>;
    await page.emulateMedia({ colorScheme: 'light' });
    const light = await background();
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await background();
    expect(dark).not.toBe(light);
    await shot(page, 'dark');
    await page.emulateMedia({ colorScheme: 'light' });
    for (const id of ['session', 'timeout', 'token']) expect(await page.getByTestId(id).evaluate((el) => (el as unknown as { labels: { length: number } }).labels.length)).toBe(1);
    expect(await page.getByRole('textbox', { name: /^Program/ }).count()).toBe(1);
    // From the session field, Tab reaches Run; Enter on it runs the program.
    await page.getByTestId('session').focus();
    for (let i = 0; i < 5 && !(await page.getByTestId('run').evaluate((el) => el === (el.ownerDocument as unknown as { activeElement: unknown }).activeElement)); i++) {
      await page.keyboard.press('Tab');
    }
    expect(await page.evaluate("document.activeElement.dataset.testid")).toBe('run');
    await page.keyboard.press('Enter');
    await page.getByTestId('result').waitFor();
    // The tabs answer the arrow keys.
    await page.getByTestId('tab-typings').focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.getByTestId('tab-prompt').getAttribute('aria-selected')).toBe('true');
  });
});

describe('performance', () => {
  it('streams a 200-call program; measures load size, time to interactive and long tasks', async () => {
    const page = await browser.context.newPage();
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Network.enable');
    // A first load: the earlier tests' pages left the immutable assets in this profile's cache.
    await cdp.send('Network.clearBrowserCache');
    let transferred = 0;
    cdp.on('Network.loadingFinished', (event: { encodedDataLength: number }) => (transferred += event.encodedDataLength));
    const code = "const all = await Promise.all(Array.from({ length: 200 }, (_, i) => tools.glob({ pattern: `f${i}.txt` })));\nreturn all.length;";
    await page.goto(`${open.url}/#code=${b64url(code)}`);
    await page.locator('body[data-ready="true"]').waitFor();
    const timing = (await page.evaluate(`({
      domInteractive: performance.getEntriesByType('navigation')[0].domInteractive,
      ready: performance.getEntriesByName('playground-ready')[0].startTime,
    })`)) as { domInteractive: number; ready: number };
    // The TypeScript worker loads after the page is interactive; observe the stream only once its first check is done.
    await page.waitForFunction(() => performance.getEntriesByName('playground-types-ready').length > 0);
    const typesReady = (await page.evaluate(`performance.getEntriesByName('playground-types-ready')[0].startTime`)) as number;
    const resourceBytes = (await page.evaluate(`performance.getEntriesByType('resource').reduce((sum, e) => sum + e.transferSize, 0)`)) as number;
    await page.evaluate(`window.longTasks = [];
      new PerformanceObserver((list) => list.getEntries().forEach((entry) => window.longTasks.push(entry.duration))).observe({ type: 'longtask' });`);
    await page.getByTestId('run').click();
    await page.getByTestId('result').waitFor();
    await countIs(page, '[data-testid="timeline-row"][data-state="ok"]', 200);
    expect(await page.getByTestId('result').innerText()).toContain('200');
    const longTasks = (await page.evaluate('window.longTasks')) as number[];
    await shot(page, 'two-hundred-calls');
    const report = {
      transferredBytes: transferred,
      domInteractiveMs: Math.round(timing.domInteractive),
      readyMs: Math.round(timing.ready),
      typesReadyMs: Math.round(typesReady),
      resourceTransferBytes: resourceBytes,
      longTasksWhileStreaming: longTasks.length,
      longestTaskMs: Math.round(Math.max(0, ...longTasks)),
    };
    writeFileSync(`${ARTIFACTS}perf.json`, `${JSON.stringify(report, null, 2)}\n`);
    console.log('playground performance', report);
    expect(timing.ready).toBeGreaterThan(0);
    await page.close();
  });
});

describe('typings', () => {
  // Last but one: it adds a tool to the shared server.
  it('reloads the typings when their ETag changes', async () => {
    const { page } = await visit(open, `#code=${b64url('return await tools.add({ a: 1, b: 2 });')}`);
    const mark = page.getByTestId('editor').locator('.cm-lintRange-error');
    await mark.filter({ hasText: 'add' }).waitFor();
    open.server.core.registry.register(
      defineTool({
        name: 'add',
        description: 'Adds two numbers.',
        parameters: { a: { type: 'number', required: true }, b: { type: 'number', required: true } },
        output: { schema: { type: 'number' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
        execute: async ({ a, b }) => a + b,
      }),
    );
    // The page revalidates on focus (and every 10 s): a new ETag, new typings, and the mark is gone.
    await page.evaluate("window.dispatchEvent(new Event('focus'))");
    expect(await (await fetch(`${open.url}/v1/typings`)).text()).toContain('Adds two numbers.');
    await countIs(page, '[data-testid="editor"] .cm-lintRange-error', 0);
    // The typings tab shows the new text too (its first lines, as the view renders only what is on screen).
    await page.getByTestId('panel-typings').getByText(/^\s*add: \(\{ a: number; b: number \}/).waitFor();
  });
});

describe('console', () => {
  it('no page logged an error, a warning or a CSP violation', () => {
    expect(pages.length).toBeGreaterThan(0);
    // Expected, and logged by the browser itself: the token page's 401s before the token is given,
    // and the 400 of a server that does not page events yet (`limit`), which the page falls back from.
    const expected = (problem: string) =>
      (problem.includes('status of 401') && problem.includes(closed.url)) || (problem.includes('status of 400') && /\/events\?after=\d+&limit=/.test(problem));
    expect(pages.flatMap((p) => p.problems).filter((problem) => !expected(problem))).toEqual([]);
  });
});
