import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/config.ts';

let cwd: string;
beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'ptc-mcp-config-'));
});
afterAll(async () => rm(cwd, { recursive: true, force: true }));

describe('typingsBudget', () => {
  it('defaults to 16,000 characters; the file, then the env, then the flag win', async () => {
    expect(loadConfig({ cwd, env: {} }).typingsBudget).toBe(16_000);
    await writeFile(join(cwd, 'ptc.config.json'), JSON.stringify({ typingsBudget: 100 }));
    expect(loadConfig({ cwd, env: {} }).typingsBudget).toBe(100);
    expect(loadConfig({ cwd, env: { PTC_TYPINGS_BUDGET: '200' } }).typingsBudget).toBe(200);
    expect(loadConfig({ cwd, env: { PTC_TYPINGS_BUDGET: '200' }, flags: { typingsBudget: '0' } }).typingsBudget).toBe(0);
    await rm(join(cwd, 'ptc.config.json'));
  });

  it('refuses what is not a whole number of characters, saying what to use', async () => {
    expect(() => loadConfig({ cwd, env: { PTC_TYPINGS_BUDGET: 'lots' } })).toThrow(/typings budget "lots" is not a number of characters/);
    expect(() => loadConfig({ cwd, env: {}, flags: { typingsBudget: '-1' } })).toThrow(/use an integer such as 16000/);
    await writeFile(join(cwd, 'ptc.config.json'), JSON.stringify({ typingsBudget: 1.5 }));
    expect(() => loadConfig({ cwd, env: {} })).toThrow(/typingsBudget must be integer/);
    await rm(join(cwd, 'ptc.config.json'));
  });
});
