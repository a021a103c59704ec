/**
 * stripProgram keeps recently stripped programs: a repeated program gets the
 * same JavaScript, and a failure is never served from the cache (its message
 * names the run's own filename).
 */
import { describe, expect, it } from 'vitest';
import { stripProgram } from '../../sandbox/strip-types.ts';

describe('stripProgram', () => {
  it('strips a repeated program to the same JavaScript, positions preserved', async () => {
    const code = 'const n: number = await tools.count<{ a: 1 }>({});\nreturn n;';
    const first = await stripProgram(code, 'agent.ts');
    const second = await stripProgram(code, 'agent.ts');
    expect(first).toEqual(second);
    expect(first.ok && first.js).toContain('const n         = await tools.count');
    expect(first.ok && first.js.split('\n').length).toBe(4);
  });

  it('reports each failure with its own filename', async () => {
    const code = 'enum Colour { Red }\nreturn 1;';
    const a = await stripProgram(code, 'a.ts');
    const b = await stripProgram(code, 'b.ts');
    expect(a).toMatchObject({ ok: false, failure: { kind: 'syntax', message: expect.stringContaining('a.ts:') } });
    expect(b).toMatchObject({ ok: false, failure: { kind: 'syntax', message: expect.stringContaining('b.ts:') } });
  });
});
