/**
 * Caps on the patterns grep and glob compile, checked before anything is
 * compiled. Compiling is where a pattern costs the host most: V8's regexp
 * compiler aborts the whole process (out of zone memory) on a few thousand
 * nested groups, and picomatch's compile time grows with about the cube of
 * the extglob nesting. Both grow with length and nesting, so both are capped;
 * matching itself is bounded separately (search-pool.ts runs it in a worker
 * under the call's deadline).
 */
import type { ResolvedLimits } from './limits.ts';
import { WorkspaceError } from './workspace-error.ts';

type PatternLimits = Pick<ResolvedLimits, 'maxPatternChars' | 'maxPatternDepth'>;

/** Deepest nesting of groups in a regular expression source; escapes and character classes are skipped. */
function regexNesting(source: string): number {
  let depth = 0;
  let max = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
    } else if (c === '(') {
      depth++;
      if (depth > max) max = depth;
    } else if (c === ')') {
      if (depth > 0) depth--;
    }
  }
  return max;
}

/**
 * Deepest nesting of groups, extglobs and braces in a glob. Counted
 * conservatively: `(` and `{` inside a bracket class count too, as does an
 * opener never closed.
 */
function globNesting(pattern: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
    } else if (c === '(' || c === '{') {
      depth++;
      if (depth > max) max = depth;
    } else if ((c === ')' || c === '}') && depth > 0) {
      depth--;
    }
  }
  return max;
}

/** Refuses a regular expression over the length or nesting cap, and one that does not parse. */
export function checkRegexPattern(source: string, flags: string, limits: PatternLimits): void {
  checkLength('pattern', source, limits);
  const depth = regexNesting(source);
  if (depth > limits.maxPatternDepth) throw tooDeep('pattern', 'groups', depth, limits);
  try {
    // Only parses: V8 generates the matcher lazily, at the first match (in the worker).
    new RegExp(source, flags);
  } catch (error) {
    throw new WorkspaceError('invalid-argument', `pattern is not a valid JavaScript regular expression (${(error as Error).message}): fix or escape it`);
  }
}

/** Refuses a glob over the length or nesting cap. `name` is the argument it came from. */
export function checkGlobPattern(name: string, pattern: string, limits: PatternLimits): void {
  checkLength(name, pattern, limits);
  const depth = globNesting(pattern);
  if (depth > limits.maxPatternDepth) throw tooDeep(name, 'groups, extglobs and braces', depth, limits);
}

function checkLength(name: string, pattern: string, limits: PatternLimits): void {
  if (pattern.length > limits.maxPatternChars) {
    throw new WorkspaceError(
      'invalid-argument',
      `${name} is ${pattern.length} characters, over the ${limits.maxPatternChars}-character limit: use a shorter pattern (or several calls)`,
    );
  }
}

function tooDeep(name: string, what: string, depth: number, limits: PatternLimits): WorkspaceError {
  return new WorkspaceError(
    'invalid-argument',
    `${name} nests ${what} ${depth} deep, over the limit of ${limits.maxPatternDepth}: flatten the pattern`,
  );
}
