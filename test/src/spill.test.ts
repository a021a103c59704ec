import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../src/registry.ts';
import type { ToolExecutionResult } from '../../src/tool.ts';
import { bodyTool, echoTool, textOf } from './tool-fixtures.ts';

const CAP = 600;

describe('spill projection', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptc-spill-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function registryWithSpill(spillDir = join(dir, 'spill')) {
    const registry = createToolRegistry({ spill: { dir: spillDir, maxInlineBytes: CAP } });
    registry.register(echoTool());
    return registry;
  }

  it('stores an over-cap outer text result whole and shows a preview that fits the cap', async () => {
    const registry = registryWithSpill();
    const text = `HEAD-${'x'.repeat(5000)}-TAIL`;
    const result = await registry.dispatch({ name: 'echo', arguments: { text }, sessionId: 'sess', callId: 'call1' });
    expect(result.isError).toBe(false);
    expect(result.value).toEqual({ text });
    const preview = textOf(result);
    expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(CAP);
    expect(preview.startsWith('HEAD-')).toBe(true);
    expect(preview.endsWith('-TAIL')).toBe(true);
    const file = join(dir, 'spill', 'sess', 'call1.txt');
    expect(preview).toContain(file);
    expect(await readFile(file, 'utf8')).toBe(text);
  });

  it('names the stored file as shownAs says, never the host path, when shownAs is set', async () => {
    const registry = createToolRegistry({ spill: { dir: join(dir, 'spill'), shownAs: '<data dir>/spill', maxInlineBytes: CAP } });
    registry.register(echoTool());
    const text = 'z'.repeat(5000);
    const result = await registry.dispatch({ name: 'echo', arguments: { text }, sessionId: 'sess', callId: 'call2' });
    const preview = textOf(result);
    expect(preview).toContain('<data dir>/spill/sess/call2.txt');
    expect(preview).not.toContain(dir);
    expect(await readFile(join(dir, 'spill', 'sess', 'call2.txt'), 'utf8')).toBe(text);
  });

  it('keeps the preview within the cap and on character boundaries for multi-byte text', async () => {
    const text = '€😀'.repeat(3000);
    for (const cap of [512, 513, 700, 1001]) {
      const registry = createToolRegistry({ spill: { dir: join(dir, 'spill'), shownAs: '/x', maxInlineBytes: cap } });
      registry.register(echoTool());
      const preview = textOf(await registry.dispatch({ name: 'echo', arguments: { text }, sessionId: 's', callId: `c${cap}` }));
      expect(preview).toContain('/x/s/c');
      expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(cap);
      expect(preview).not.toContain('\uFFFD');
    }
  });

  it('leaves a result at or under the cap alone', async () => {
    const registry = registryWithSpill();
    const text = 'y'.repeat(CAP);
    const result = await registry.dispatch({ name: 'echo', arguments: { text }, callId: 'small' });
    expect(textOf(result)).toBe(text);
    await expect(readdir(join(dir, 'spill'))).rejects.toThrow();
  });

  it('skips nested calls', async () => {
    const registry = registryWithSpill();
    let nested: ToolExecutionResult | undefined;
    registry.register(
      bodyTool('outer', async (_args, exec) => {
        nested = await registry.dispatch({ name: 'echo', arguments: { text: 'z'.repeat(5000) }, parent: exec.token, callId: 'inner' });
        return null;
      }),
    );
    await registry.dispatch({ name: 'outer', arguments: {} });
    expect(textOf(nested!)).toBe('z'.repeat(5000));
  });

  it('skips results whose value a post-execute hook replaced', async () => {
    const registry = registryWithSpill();
    registry.hook('tools/post-execute', () => ({ kind: 'accept', value: { text: 'v'.repeat(5000) } }));
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'short' }, callId: 'replaced' });
    expect(textOf(result)).toBe('v'.repeat(5000));
  });

  it('still spills content a hook replaced (presentation only)', async () => {
    const registry = registryWithSpill();
    registry.hook('tools/post-execute', () => ({ kind: 'accept', content: [{ type: 'text', text: 'c'.repeat(5000) }] }));
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'short' }, sessionId: 's', callId: 'content' });
    expect(Buffer.byteLength(textOf(result))).toBeLessThanOrEqual(CAP);
    expect(await readFile(join(dir, 'spill', 's', 'content.txt'), 'utf8')).toBe('c'.repeat(5000));
  });

  it('skips content with any non-text block', async () => {
    const registry = createToolRegistry({ spill: { dir: join(dir, 'spill'), maxInlineBytes: CAP } });
    registry.register(
      bodyTool('mixed', async () => null, {
        output: {
          schema: {},
          render: () => [
            { type: 'text', text: 'm'.repeat(5000) },
            { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          ],
        },
      }),
    );
    const result = await registry.dispatch({ name: 'mixed', arguments: {} });
    expect(result.content).toHaveLength(2);
    expect(result.content[0]).toEqual({ type: 'text', text: 'm'.repeat(5000) });
  });

  it('skips failures', async () => {
    const registry = registryWithSpill();
    registry.register(bodyTool('boom', async () => { throw new Error('e'.repeat(5000)); }));
    const result = await registry.dispatch({ name: 'boom', arguments: {} });
    expect(textOf(result)).toBe(`Error: ${'e'.repeat(5000)}`);
  });

  it('keeps the original content when spilling fails', async () => {
    const blocker = join(dir, 'not-a-folder');
    await writeFile(blocker, 'a file where the spill folder should be');
    const registry = registryWithSpill(blocker);
    const text = 'w'.repeat(5000);
    const result = await registry.dispatch({ name: 'echo', arguments: { text }, callId: 'fails' });
    expect(result.isError).toBe(false);
    expect(textOf(result)).toBe(text);
  });

  it('keeps the original content when the call id cannot name a file', async () => {
    const registry = registryWithSpill();
    const text = 'q'.repeat(5000);
    const result = await registry.dispatch({ name: 'echo', arguments: { text }, callId: '../escape' });
    expect(textOf(result)).toBe(text);
    await expect(readdir(join(dir, 'spill'))).rejects.toThrow();
  });

  it('refuses a cap too small for the notice', () => {
    expect(() => createToolRegistry({ spill: { dir, maxInlineBytes: 10 } })).toThrow(/maxInlineBytes/);
  });
});
