/**
 * Text helpers for generated TypeScript: description cleaning, JSDoc blocks,
 * property keys, and the indentation pass that stands in for prettier.
 */

export interface TextLimits {
  /** Characters kept of one description; the rest is replaced by `…`. Default 2,000. */
  maxDescriptionLength: number;
}

/**
 * A description made safe for a JSDoc block: truncated first (so a 1 MB
 * string costs nothing more), line breaks normalised, control characters
 * blanked, `*\/` neutralised. Undefined when nothing is left.
 */
export function cleanDescription(raw: string, limits: TextLimits): string | undefined {
  let text = raw;
  if (text.length > limits.maxDescriptionLength) {
    text = text.slice(0, limits.maxDescriptionLength);
    // Never end on half a surrogate pair.
    if (/[\uD800-\uDBFF]$/.test(text)) text = text.slice(0, -1);
    text += '…';
  }
  text = text
    .replace(/\r\n?|[\u2028\u2029]/g, '\n')
    .replace(/[\u0000-\u0008\u000B-\u001F\u007F]/g, ' ')
    .replace(/\*\//g, '*\\/')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
  return text === '' ? undefined : text;
}

/** A JSDoc block for already-cleaned text, one ` * ` line per text line. */
export function jsdoc(text: string, indent: string): string {
  const lines = text.split('\n').map((line) => (line === '' ? `${indent} *` : `${indent} * ${line}`));
  return [`${indent}/**`, ...lines, `${indent} */`].join('\n');
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** A property key: bare when an identifier, else quoted; `__proto__` quoted too, so no reader mistakes it for the prototype. */
export function propertyKey(name: string): string {
  return IDENTIFIER.test(name) && name !== '__proto__' ? name : JSON.stringify(name);
}

/**
 * Indents generated declarations by brace depth (two spaces a level). Braces
 * inside string literals and JSDoc lines do not count; blank lines are dropped.
 * Cosmetic only, and deterministic.
 */
export function indent(source: string, baseDepth: number): string {
  const out: string[] = [];
  let depth = baseDepth;
  for (const raw of source.split('\n')) {
    const line = raw.trimEnd();
    if (line.trim() === '') continue;
    if (isCommentLine(line)) {
      out.push('  '.repeat(depth) + line);
      continue;
    }
    const delta = braceDelta(line);
    const level = line.startsWith('}') ? depth - 1 : depth;
    out.push('  '.repeat(Math.max(level, 0)) + line);
    depth += delta;
  }
  return out.join('\n');
}

function isCommentLine(line: string): boolean {
  return line === '/**' || line.startsWith(' *') || (line.startsWith('/**') && line.endsWith('*/'));
}

/**
 * Every multi-line JSDoc block of generated code as one line, `/** a b *\/`:
 * the model reads the same words for fewer bytes. Text lines are joined with
 * a space; blank ones are dropped.
 */
export function singleLineDocs(source: string): string {
  return source.replace(/^([ \t]*)\/\*\*\n((?:[ \t]* \*(?: .*)?\n)*?)[ \t]* \*\/$/gm, (_match, indent: string, body: string) => {
    const words = body
      .split('\n')
      .map((line) => line.replace(/^[ \t]* \*/, '').trim())
      .filter((line) => line !== '');
    return `${indent}/** ${words.join(' ')} */`;
  });
}

/**
 * Every innermost `{ … }` block of generated code whose lines are members
 * and one-line doc comments, joined onto one line (`{ a: string; /** doc *\/ b?: number }`)
 * while the result stays within `maxWidth` characters; repeated, so nested
 * blocks fold from the inside out. The model reads the same declarations for
 * fewer bytes (no indentation, no line per member). Works on unindented
 * output of json-schema-to-typescript, after {@link singleLineDocs}: a
 * block opens on a line ending in `{` and closes on a line starting with `}`
 * (`} | {` both closes one and opens the next).
 */
export function collapseBlocks(source: string, maxWidth: number): string {
  let lines = source.split('\n');
  for (let changed = true; changed; ) {
    changed = false;
    const out: string[] = [];
    for (let i = 0; i < lines.length; i++) {
      const folded = isOpener(lines[i]) ? foldBlock(lines, i, maxWidth) : undefined;
      if (folded === undefined) {
        out.push(lines[i]);
        continue;
      }
      out.push(folded.line);
      i = folded.close;
      changed = true;
    }
    lines = out;
  }
  return lines.join('\n');
}

/** The block opened at `open` as one line, and the index of its closing line; undefined if it has nested blocks, other comments, or would be too wide. */
function foldBlock(lines: readonly string[], open: number, maxWidth: number): { line: string; close: number } | undefined {
  let body = '';
  let pendingDoc = false;
  for (let i = open + 1; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.startsWith('}')) {
      if (pendingDoc) return undefined;
      const folded = body === '' ? `${lines[open]}${line}` : `${lines[open]} ${body} ${line}`;
      return folded.length <= maxWidth ? { line: folded, close: i } : undefined;
    }
    if (isDocLine(line)) {
      body += `${body === '' || pendingDoc ? '' : '; '}${pendingDoc ? ' ' : ''}${line}`;
      pendingDoc = true;
    } else if (line !== '' && !/^[/*]/.test(line) && !isOpener(line) && braceDelta(line) === 0) {
      body += `${body === '' ? '' : pendingDoc ? ' ' : '; '}${line}`;
      pendingDoc = false;
    } else {
      return undefined;
    }
  }
  return undefined;
}

/** A line ending in `{` that is code: `name: {`, `name: ({`, `} | {`. */
function isOpener(line: string): boolean {
  return line.endsWith('{') && !/^\s*[/*]/.test(line);
}

function isDocLine(line: string): boolean {
  return /^\/\*\*.*\*\/$/.test(line) && !line.slice(3, -2).includes('*/');
}

/** Net `{` minus `}` of a line, outside string literals and (inline, folded) doc comments. */
function braceDelta(line: string): number {
  let delta = 0;
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '/' && line[i + 1] === '*') {
      const end = line.indexOf('*/', i + 2);
      if (end === -1) break;
      i = end + 1;
    } else if (ch === '{') delta++;
    else if (ch === '}') delta--;
  }
  return delta;
}
