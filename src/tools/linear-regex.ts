/**
 * grep's patterns on a linear-time engine (re2js, a pure-JS port of RE2)
 * where the JavaScript pattern allows it: RE2 never backtracks, so
 * `(a+)+$` costs the same as `a+$`, and a hostile pattern cannot hold a
 * search worker until its timeout.
 *
 * A JavaScript pattern is rewritten into RE2 syntax with the same meaning on
 * one line of text (grep matches line by line): `.` excludes `\r`, U+2028
 * and U+2029 as in JavaScript, `\s` is JavaScript's whitespace set, `[\b]`
 * is a backspace. What RE2 cannot do, or where the two differ in ways not
 * worth rewriting, gives undefined, and the pattern runs on V8's engine in
 * the worker under its timeout: backreferences, lookaheads and
 * lookbehinds, `\c`, `\p`, `[^]`, `\S` inside a class, unknown escapes, and
 * repeat counts over RE2's 1,000. Two differences remain, documented in
 * SECURITY.md: a character outside the Basic Multilingual Plane is one
 * character to RE2 (two to JavaScript without the `u` flag), and
 * `ignoreCase` folds by Unicode's simple case folding (so `s` also matches
 * `ſ`).
 */
import { RE2JS } from 're2js';

/** JavaScript's `\s`, as members of a class. */
const JS_SPACE = '\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}';
/** JavaScript's `.` without the `s` flag. */
const JS_DOT = '[^\\n\\r\\x{2028}\\x{2029}]';
/** Escapes whose meaning is the same in both engines. */
const SAME_ESCAPES = new Set(['d', 'D', 'w', 'W', 't', 'n', 'r', 'f']);
const PUNCTUATION = /^[!-/:-@[-`{-~]$/;

class Refused extends Error {}

/** The pattern compiled for RE2, or undefined when it must run on V8's engine. */
export function compileLinear(source: string, ignoreCase: boolean): RE2JS | undefined {
  const translated = translate(source);
  if (translated === undefined) return undefined;
  try {
    return RE2JS.compile(translated, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch {
    return undefined;
  }
}

/** `source` in RE2 syntax, or undefined. Exported for the tests. */
export function translate(source: string): string | undefined {
  try {
    return new Translator(source).run();
  } catch (error) {
    if (error instanceof Refused) return undefined;
    throw error;
  }
}

class Translator {
  #at = 0;
  #out = '';
  readonly source: string;
  constructor(source: string) {
    this.source = source;
  }

  run(): string {
    const s = this.source;
    // A character outside the BMP is two code units to JavaScript without `u`, one to RE2.
    if (/[\uD800-\uDFFF]/.test(s)) throw new Refused();
    while (this.#at < s.length) {
      const c = s[this.#at++];
      if (c === '\\') this.#out += this.#escape(false);
      else if (c === '[') this.#class();
      else if (c === '(') this.#group();
      else if (c === '.') this.#out += JS_DOT;
      else if (c === '{') this.#brace();
      else if (c === '}') this.#out += '\\}';
      else this.#out += c;
    }
    return this.#out;
  }

  #escape(inClass: boolean): string {
    const s = this.source;
    if (this.#at >= s.length) throw new Refused();
    const c = s[this.#at++];
    if (SAME_ESCAPES.has(c)) return `\\${c}`;
    if (c === 'v') return '\\x{0B}';
    if (c === 's') return inClass ? JS_SPACE : `[${JS_SPACE}]`;
    if (c === 'S' && !inClass) return `[^${JS_SPACE}]`;
    if ((c === 'b' || c === 'B') && !inClass) return `\\${c}`;
    if (c === 'b') return '\\x{08}';
    if (c === '0' && !/[0-9]/.test(s[this.#at] ?? '')) return '\\x{00}';
    if (c === 'x' && /^[0-9a-fA-F]{2}$/.test(s.slice(this.#at, this.#at + 2))) {
      this.#at += 2;
      return `\\x{${s.slice(this.#at - 2, this.#at)}}`;
    }
    if (c === 'u' && /^[0-9a-fA-F]{4}$/.test(s.slice(this.#at, this.#at + 4))) {
      const hex = s.slice(this.#at, this.#at + 4);
      // A lone surrogate names half a character: only V8's engine, on code units, matches that.
      if (/^d[89a-f]/i.test(hex)) throw new Refused();
      this.#at += 4;
      return `\\x{${hex}}`;
    }
    if (PUNCTUATION.test(c)) return `\\${c}`;
    // Backreferences, \k, \c, \p and identity escapes of letters.
    throw new Refused();
  }

  #class(): void {
    const s = this.source;
    let out = '[';
    if (s[this.#at] === '^') {
      out += '^';
      this.#at++;
    }
    // `[]` matches nothing and `[^]` anything in JavaScript; RE2 reads them otherwise.
    if (s[this.#at] === ']') throw new Refused();
    for (;;) {
      if (this.#at >= s.length) throw new Refused();
      const c = s[this.#at++];
      if (c === ']') break;
      if (c === '\\') {
        // `[a-\d]` and `[\d-z]` hold a literal `-` in JavaScript, and are a range or an error in RE2.
        const set = /[dDwWs]/.test(s[this.#at] ?? '');
        if (set && (s[this.#at - 2] === '-' || s[this.#at + 1] === '-')) throw new Refused();
        out += this.#escape(true);
      }
      // RE2 reads `[:alpha:]` inside a class as a named class.
      else if (c === '[') out += '\\[';
      else out += c;
    }
    this.#out += `${out}]`;
  }

  #group(): void {
    const s = this.source;
    if (s[this.#at] !== '?') {
      this.#out += '(';
      return;
    }
    if (s[this.#at + 1] === ':') {
      this.#out += '(?:';
      this.#at += 2;
      return;
    }
    const named = /^\?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(s.slice(this.#at));
    if (named === null) throw new Refused(); // lookarounds
    this.#out += `(?P<${named[1]}>`;
    this.#at += named[0].length;
  }

  #brace(): void {
    // A repeat count in both engines; anything else is a literal brace in JavaScript.
    const count = /^(\d+)(,(\d*))?\}/.exec(this.source.slice(this.#at));
    if (count === null) {
      this.#out += '\\{';
      return;
    }
    if (Number(count[1]) > 1000 || (count[3] !== undefined && count[3] !== '' && Number(count[3]) > 1000)) throw new Refused();
    this.#out += `{${count[0]}`;
    this.#at += count[0].length;
  }
}
