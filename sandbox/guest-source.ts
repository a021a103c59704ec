/**
 * The guest as source text: one expression that evaluates to `installGuest`
 * (sandbox/guest/bootstrap.ts), with the words of src/json-violations.ts in
 * scope as `JSON_VIOLATIONS` (data, not a copy to keep in step). Read once per
 * process.
 *
 * The guest's files are modules only for the type-check. Here they become one
 * function: each file's types are stripped and its `import` lines and `export`
 * words removed, and the files bootstrap.ts imports (and theirs, each after
 * what it imports) are put into installGuest's body, after its `'use strict'`.
 * Their top-level names are then locals of one install, as its parameters are.
 */
import { readFileSync } from 'node:fs';
import { JSON_VIOLATIONS } from '../src/json-violations.ts';
import { stripTypes } from './strip-types.ts';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

// From source this file is guest-source.ts and reads guest/*.ts; built to dist/ it is
// guest-source.js and reads the compiled guest/*.js.
const extension = extname(fileURLToPath(import.meta.url));

/** A value import of a sibling guest file (type-only imports are gone once types are stripped); the compiler writes it with double quotes. */
const SIBLING_IMPORT = /^import \{[^}]*\} from (['"])\.\/([\w-]+)\.(?:ts|js)\1;[ \t]*$/gm;
const EXPORT_WORD = /^export (?=function |const |let |class )/gm;
// What the compiler leaves of a file that declares only types and ambient names (guest/host.ts).
const EMPTY_EXPORT = /^export \{\};[ \t]*$/gm;
const USE_STRICT = "'use strict';";

/** The file as a function body's part, and the sibling files it imports, in order. */
function readGuestFile(name: string): { body: string; imports: string[] } {
  const typed = readFileSync(new URL(`./guest/${name}${extension}`, import.meta.url), 'utf8');
  const text = stripTypes(typed).replace(/^\/\/# sourceMappingURL=.*$/m, '');
  const imports = [...text.matchAll(SIBLING_IMPORT)].map((match) => match[2] as string);
  const body = text.replace(SIBLING_IMPORT, '').replace(EXPORT_WORD, '').replace(EMPTY_EXPORT, '');
  const stray = /^(?:import|export)\b.*$/m.exec(body);
  if (stray !== null) throw new Error(`sandbox/guest/${name}: the guest's loader cannot join this line: ${stray[0]}`);
  return { body, imports };
}

/** bootstrap.ts with the files it reaches spliced into installGuest's body, each after its own imports. */
function joinGuest(): string {
  const bodies = new Map<string, string>();
  const entering = new Set<string>();
  const visit = (name: string): void => {
    if (bodies.has(name)) return;
    // A file's top-level code may run its imports' at install: a circle has no order that works.
    if (entering.has(name)) throw new Error(`sandbox/guest/${name} imports itself through its siblings: the guest's files must not import in a circle`);
    entering.add(name);
    const { body, imports } = readGuestFile(name);
    for (const imported of imports) visit(imported);
    entering.delete(name);
    bodies.set(name, body);
  };
  visit('bootstrap');
  const entry = bodies.get('bootstrap') as string;
  bodies.delete('bootstrap');
  const at = entry.indexOf(USE_STRICT, entry.indexOf('function installGuest('));
  if (at < 0) throw new Error("sandbox/guest/bootstrap: installGuest's body must begin with 'use strict'");
  const parts = [...bodies.values()].join('\n');
  return `${entry.slice(0, at + USE_STRICT.length)}\n${parts}\n${entry.slice(at + USE_STRICT.length)}`;
}

let cached: string | undefined;

export function guestSource(): string {
  if (cached === undefined) {
    // Parenthesised, the functions compile eagerly with the script (and their
    // parenthesised inner functions with them), so the code cache holds them.
    cached = `((JSON_VIOLATIONS) => (${joinGuest()}\n))(${JSON.stringify(JSON_VIOLATIONS)})`;
  }
  return cached;
}
