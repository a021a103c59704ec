/**
 * grep's patterns on RE2: the rewritten pattern matches exactly the lines
 * the JavaScript pattern matches, and what RE2 cannot do (or would read
 * otherwise) is left to V8's engine.
 */
import { describe, expect, it } from 'vitest';
import { compileLinear, translate } from '../../src/tools/linear-regex.ts';

const LINES = [
  '',
  'abc',
  'ABC def',
  'def  foo(bar)',
  'tab\there',
  'nbsp\u00a0here',
  'vt\u000bhere',
  'ls\u2028here',
  'cr\rhere',
  'back\bspace',
  'x{2}y',
  'a{,}b',
  'aaa',
  'aaaa!',
  'price: $12.50',
  '[:alpha:] text',
  'é accent',
  'under_score-dash',
  'null\u0000byte',
];

const PATTERNS = [
  'abc',
  '^abc$',
  'def\\s+\\w+',
  '\\S+\\s\\S+',
  '[\\s]',
  '[^\\s\\d]+$',
  '.here',
  '^.*$',
  '[\\b]',
  '\\bdef\\b',
  '\\Bef',
  'x{2}y',
  'x\\{2\\}y',
  'a{,}b',
  'a{2,3}',
  '^(a+)+$',
  '(a|aa)+!',
  '\\$\\d+\\.\\d{2}',
  '[[:alpha:]]',
  '\\u00e9',
  '\\xe9',
  '(?<word>[a-z]+)_',
  '(?:ab|cd)c',
  'a*?b',
  '\\0',
  '\\v',
  '[a-c]{3}',
  '[-a]',
  'ABC',
];

describe('RE2 translation', () => {
  it('matches the same lines as the JavaScript pattern, case-sensitive and not', () => {
    for (const pattern of PATTERNS) {
      for (const ignoreCase of [false, true]) {
        const linear = compileLinear(pattern, ignoreCase);
        expect(linear, `${pattern} is linear`).toBeDefined();
        const js = new RegExp(pattern, ignoreCase ? 'i' : '');
        for (const line of LINES) expect(linear!.test(line), `${pattern} on ${JSON.stringify(line)}`).toBe(js.test(line));
      }
    }
  });

  it('leaves to V8 what RE2 cannot do or would read otherwise', () => {
    for (const pattern of ['(a)\\1', '(?<x>a)\\k<x>', '(?=a)', '(?!a)', '(?<=a)b', '(?<!a)b', '[^]', '[]', '[\\S]', '\\cA', '\\p{L}', '\\q', '[a-\\d]', '[\\w-z]', 'a{1001}', '😀', '\\ud83d']) {
      expect(translate(pattern), pattern).toBeUndefined();
    }
  });
});
