/**
 * The bootstrap as source text: sandbox/guest/bootstrap.ts with its types
 * stripped and `export` removed, ending in an expression that evaluates to
 * `installGuest`. Read once per process.
 */
import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';

let cached: string | undefined;

export function guestSource(): string {
  if (cached === undefined) {
    const typed = readFileSync(new URL('./guest/bootstrap.ts', import.meta.url), 'utf8');
    const stripped = stripTypeScriptTypes(typed, { mode: 'strip' }).replace(/^export (?=function |const |let |class )/gm, '');
    cached = `${stripped}\n;installGuest`;
  }
  return cached;
}
