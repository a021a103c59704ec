/**
 * A paused run in the playground, in a real browser against a real server: the pending call
 * shows with Approve / Deny and a reason, and the timeline goes on after the decision.
 */
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { startServer, type Running } from '../services/helpers.ts';
import { ARTIFACTS, launch, openPage, type Launched, type WatchedPage } from './browser.ts';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const b64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const shot = (page: Page, name: string) => page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
type InPage = { document: { querySelectorAll(selector: string): { length: number } } };
const countIs = (page: Page, selector: string, count: number) =>
  page.waitForFunction(([s, n]) => (globalThis as unknown as InPage).document.querySelectorAll(s).length === n, [selector, count] as const);

let browser: Launched;
let server: Running;
const pages: WatchedPage[] = [];
const executed: string[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  [browser, server] = await Promise.all([launch(), startServer()]);
  const registry = server.server.core.registry;
  registry.register(
    defineTool({
      name: 'lookup',
      description: 'Finds a person.',
      parameters: { name: { type: 'string', required: true } },
      output: { schema: { type: 'json' }, render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) }] },
      execute: async (args) => (executed.push(`lookup ${args.name}`), { email: `${args.name}@example.com` }),
    }),
  );
  registry.register(
    defineTool({
      name: 'send',
      description: 'Sends a message.',
      parameters: { to: { type: 'string', required: true } },
      output: { schema: { type: 'json' }, render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) }] },
      needsApproval: true,
      execute: async (args) => (executed.push(`send ${args.to}`), { sent: args.to }),
    }),
  );
});

afterAll(async () => {
  for (const { page } of pages) await page.close().catch(() => undefined);
  await browser?.close();
  await server?.server.close();
});

const PROGRAM = [
  "const who = await tools.lookup({ name: 'bob' });",
  "console.log('found', who.email);",
  'try {',
  '  return await tools.send({ to: who.email });',
  '} catch (e) {',
  '  return { refused: e.code, why: e.message };',
  '}',
].join('\n');

async function runToPause(): Promise<WatchedPage> {
  const watched = await openPage(browser.context, `${server.url}/#code=${b64url(PROGRAM)}`);
  pages.push(watched);
  const { page } = watched;
  await page.getByTestId('run').click();
  await page.getByTestId('approval').waitFor();
  return watched;
}

describe('a paused run in the playground', () => {
  it('shows the pending call with Approve / Deny; approving resumes the run and the timeline goes on', async () => {
    executed.length = 0;
    const { page, problems } = await runToPause();
    expect(await page.getByTestId('approval-call').innerText()).toContain('tools.send');
    expect(JSON.parse(await page.getByTestId('approval-args').innerText())).toEqual({ to: 'bob@example.com' });
    await countIs(page, '[data-testid="timeline-row"][data-state="ok"][data-tool="lookup"]', 1);
    await countIs(page, '[data-testid="timeline-row"][data-state="waiting"][data-tool="send"]', 1);
    expect(await page.getByTestId('result').isHidden()).toBe(true);
    expect(await page.getByTestId('run').isEnabled()).toBe(true);
    expect(executed).toEqual(['lookup bob']);
    await shot(page, 'approval-requested');

    await page.getByTestId('approval-reason').fill('looks right');
    await page.getByTestId('approve').click();
    await page.getByTestId('result').waitFor();
    expect(await page.getByTestId('approval').isHidden()).toBe(true);
    expect(await page.getByTestId('result').innerText()).toContain('"sent": "bob@example.com"');
    // One row per call: the waiting row became the approved call's, and lookup was answered from the journal.
    await countIs(page, '[data-testid="timeline-row"]', 2);
    await countIs(page, '[data-testid="timeline-row"][data-state="ok"][data-tool="send"]', 1);
    expect(executed).toEqual(['lookup bob', 'send bob@example.com']);
    // The replayed program logged again; its lines replaced the paused run's.
    expect(await page.getByTestId('logs').innerText()).toBe('found bob@example.com\n');
    await shot(page, 'approval-approved');
    expect(problems).toEqual([]);
  });

  it('offers a run that paused before the page was opened, and resumes it from there', async () => {
    executed.length = 0;
    const first = await runToPause();
    await first.page.close();
    const { page, problems } = await openPage(browser.context, `${server.url}/`);
    pages.push({ page, problems });
    await page.getByTestId('approval').waitFor();
    expect(await page.getByTestId('approval-call').innerText()).toContain('tools.send');
    await countIs(page, '[data-testid="timeline-row"][data-state="waiting"][data-tool="send"]', 1);
    await page.getByTestId('approve').click();
    await page.getByTestId('result').waitFor();
    expect(await page.getByTestId('result').innerText()).toContain('"sent": "bob@example.com"');
    expect(executed).toEqual(['lookup bob', 'send bob@example.com']);
    expect(problems).toEqual([]);
  });

  it('denying with a reason throws it at the call inside the program, which goes on; the row shows the denial', async () => {
    executed.length = 0;
    const { page, problems } = await runToPause();
    await page.getByTestId('approval-reason').fill('not today');
    await page.getByTestId('deny').click();
    await page.getByTestId('result').waitFor();
    const result = await page.getByTestId('result').innerText();
    expect(result).toContain('"refused": "APPROVAL_DENIED"');
    expect(result).toContain('not today');
    await countIs(page, '[data-testid="timeline-row"][data-state="denied"][data-tool="send"]', 1);
    expect(executed).toEqual(['lookup bob']);
    await shot(page, 'approval-denied');
    expect(problems).toEqual([]);
  });
});
