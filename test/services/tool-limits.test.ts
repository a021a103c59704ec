import { afterEach, describe, expect, it } from 'vitest';
import { json, post, startServer, type Running } from './helpers.ts';

let running: Running | undefined;
afterEach(async () => {
  await running?.server.close();
  running = undefined;
});

describe('toolLimits through a real server', () => {
  it('caps the built-in tools as configured, and their typings say so', async () => {
    running = await startServer({ toolLimits: { maxPatternChars: 8, maxResults: 3 } });
    const code = [
      "await tools.write({ file_path: 'notes.txt', content: 'alpha\\nbeta\\n' });",
      "const ok = await tools.grep({ pattern: 'al+pha' });",
      'try {',
      "  await tools.grep({ pattern: 'a'.repeat(9) });",
      "  return 'not capped';",
      '} catch (error) {',
      '  if (!(error instanceof ToolCallError)) throw error;',
      '  return { found: ok.matches.length, code: error.code, message: error.message };',
      '}',
    ].join('\n');
    const body = await json(post(`${running.url}/v1/run`, { code }));
    expect(body.isError).toBe(false);
    expect(body.value.result).toMatchObject({ found: 1, code: 'TOOL_FAILED' });
    expect(body.value.result.message).toContain('pattern is 9 characters, over the 8-character limit: use a shorter pattern');

    const typings = await (await fetch(`${running.url}/v1/typings`)).text();
    expect(typings).toContain('as sorted workspace-relative paths; at most 3.');
  });
});
