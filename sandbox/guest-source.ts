/**
 * The bootstrap as source text: sandbox/guest/bootstrap.ts with its types
 * stripped and `export` removed, wrapped in parentheses: an expression that
 * evaluates to `installGuest`, with the words of src/json-violations.ts in
 * scope as `JSON_VIOLATIONS` (data, not a copy to keep in step). Read once per
 * process.
 */
import { readFileSync } from 'node:fs';
import { JSON_VIOLATIONS } from '../src/json-violations.ts';
import { stripTypes } from './strip-types.ts';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

// From source this file is guest-source.ts and reads guest/bootstrap.ts; built
// to dist/ it is guest-source.js and reads the compiled guest/bootstrap.js.
const extension = extname(fileURLToPath(import.meta.url));

let cached: string | undefined;

export function guestSource(): string {
  if (cached === undefined) {
    const typed = readFileSync(new URL(`./guest/bootstrap${extension}`, import.meta.url), 'utf8');
    const stripped = stripTypes(typed)
      .replace(/^\/\/# sourceMappingURL=.*$/m, '')
      .replace(/^export (?=function |const |let |class )/gm, '');
    // Parenthesised, the functions compile eagerly with the script (and their
    // parenthesised inner functions with them), so the code cache holds them.
    cached = `((JSON_VIOLATIONS) => (${stripped}\n))(${JSON.stringify(JSON_VIOLATIONS)})`;
  }
  return cached;
}
