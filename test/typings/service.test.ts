import { describe, expect, it } from 'vitest';
import type { ToolSchema } from '../../src/tool.ts';
import { generateTypings } from '../../typings/generate.ts';
import { createTypingsService } from '../../typings/service.ts';
import { SMALL_TOOLS } from './fixtures.ts';

describe('createTypingsService', () => {
  it('serves the generated typings, cached by content whatever the order or the objects', async () => {
    const service = createTypingsService();
    const first = service.typings(SMALL_TOOLS);
    const copy = JSON.parse(JSON.stringify([...SMALL_TOOLS].reverse())) as ToolSchema[];
    const second = service.typings(copy);
    expect(second).toBe(first);
    expect(await first).toBe(await generateTypings(SMALL_TOOLS));
  });

  it('regenerates when a schema changes', async () => {
    const service = createTypingsService();
    const before = await service.typings(SMALL_TOOLS);
    const changed = [{ ...SMALL_TOOLS[0], description: 'Read a file, changed.' }, ...SMALL_TOOLS.slice(1)];
    const after = await service.typings(changed);
    expect(after).not.toBe(before);
    expect(after).toContain('Read a file, changed.');
  });

  it('keeps at most cacheSize tool sets', async () => {
    const service = createTypingsService({ cacheSize: 1 });
    const a = service.typings(SMALL_TOOLS);
    service.typings(SMALL_TOOLS.slice(1));
    expect(service.typings(SMALL_TOOLS)).not.toBe(a);
  });

  it('renders the prompt around the typings', async () => {
    const service = createTypingsService({ promptLimits: { timeoutMs: 45_000 } });
    const prompt = await service.prompt(SMALL_TOOLS);
    expect(prompt).toContain('45 s of wall time');
    expect(prompt).toContain(await service.typings(SMALL_TOOLS));
  });

  it('checks a program against the typings of the schemas given', async () => {
    const service = createTypingsService();
    expect(await service.check('return await tools.read({ path: "a" });', SMALL_TOOLS)).toEqual([]);
    const found = await service.check('return await tools.read({ path: "a" });', SMALL_TOOLS.slice(1));
    expect(found).toMatchObject([{ line: 1, column: 20, code: 2339 }]);
  });
});
