import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.ts';
import { CALL_ERROR_CODE_LIST } from '../../typings/call-error-codes.ts';
import { generateTypings } from '../../typings/generate.ts';
import { renderPrompt } from '../../typings/prompt.ts';
import { SMALL_TOOLS } from './fixtures.ts';

describe('renderPrompt', () => {
  it('explains the program model, then shows the typings in a ts block', async () => {
    const typings = await generateTypings(SMALL_TOOLS);
    const prompt = renderPrompt(typings);
    for (const phrase of [
      'body of an async function',
      '`await`',
      '`return <value>`',
      'await tools.name(args)',
      'lossless JSON',
      'deep-frozen',
      '`ToolCallError`',
      '`Promise.all`',
      '`console.log`',
      '`WebAssembly`',
      '`require`',
      '`process`',
      '30 s of wall time',
      '`timeoutMs` of up to 10 min',
      '1,000 tool calls (10 at a time)',
      '1 MiB of logs',
      '16 MiB of returned value',
      "One tool call's argument may be at most 4 MiB of JSON",
    ]) {
      expect(prompt).toContain(phrase);
    }
    for (const code of CALL_ERROR_CODE_LIST) expect(prompt).toContain(`\`${code}\``);
    expect(prompt.endsWith(`\`\`\`ts\n${typings.trimEnd()}\n\`\`\`\n`)).toBe(true);
  });

  it('states the configured limits', () => {
    const prompt = renderPrompt('', { timeoutMs: 5_500, maxTimeoutMs: 90_000, maxCalls: 50, maxParallelCalls: 2, maxLogBytes: 64 * 1024, maxResultBytes: 1000, maxArgBytes: 512 });
    expect(prompt).toContain('5.5 s of wall time');
    expect(prompt).toContain('`timeoutMs` of up to 90 s');
    expect(prompt).toContain('50 tool calls (2 at a time), 64 KiB of logs, 1,000 bytes of returned value');
    expect(prompt).toContain("One tool call's argument may be at most 512 bytes of JSON: a larger one fails that call with `INVALID_ARGS`");
  });

  it('fences the typings so a description cannot close the block', async () => {
    const typings = await generateTypings([{ ...SMALL_TOOLS[0], description: 'Sneaky ```` fence' }]);
    const prompt = renderPrompt(typings);
    expect(prompt).toContain('`````ts\n');
    expect(prompt.endsWith('\n`````\n')).toBe(true);
  });
});

describe('ToolCallError codes', () => {
  it('are every catalogue code except the whole-run and host-side codes, in catalogue order', () => {
    const hostOnly = ['CODE_RUN_FAILED', 'RUN_LOST', 'RUN_NOT_FOUND', 'RUN_NOT_PAUSED', 'JOURNAL_CORRUPT'];
    expect(CALL_ERROR_CODE_LIST).toEqual(Object.keys(ERROR_CODES).filter((code) => !hostOnly.includes(code)));
  });
});
