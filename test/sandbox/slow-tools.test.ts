import { describe, expect, it } from 'vitest';
import { SlowTools } from '../../sandbox/slow-tools.ts';

describe('SlowTools', () => {
  it('remembers a tool for memoryMs after its latest miss, then forgets it', () => {
    const slow = new SlowTools(1_000);
    expect(slow.current(0)).toEqual([]);
    slow.add('a', 0);
    slow.add('b', 500);
    expect(slow.current(999)).toEqual(['a', 'b']);
    slow.add('a', 900);
    // a's latest miss was at 900: still remembered at 1,000, b until 1,500.
    expect(slow.current(1_000)).toEqual(['a', 'b']);
    expect(slow.current(1_900)).toEqual([]);
  });

  it('hands out the same array while nothing changes', () => {
    const slow = new SlowTools(1_000);
    slow.add('a', 0);
    const first = slow.current(1);
    expect(slow.current(2)).toBe(first);
    slow.add('a', 3);
    expect(slow.current(4)).toBe(first);
    slow.add('b', 5);
    expect(slow.current(6)).not.toBe(first);
  });

  it('holds at most maxNames tools', () => {
    const slow = new SlowTools(1_000, 2);
    for (const name of ['a', 'b', 'c']) slow.add(name, 0);
    expect(slow.current(1)).toEqual(['a', 'b']);
  });
});
