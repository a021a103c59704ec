/**
 * V8's tiering and the guest's freeze of the values it receives. Each run is a fresh context, and
 * a run that received a big value ends with its isolate disposed (its heap is past the recycle
 * bound), so the optimized code V8 makes for the freeze loops (Maglev, then TurboFan, on-stack
 * replacement included: about 3 ms of compiling on V8's worker threads for a 1 MB value) serves
 * one run and is thrown away, while the compiles compete for the cores with the run itself. Left
 * to the interpreter and Sparkplug, which cost no compile worth the name, the peer bench's 1 MB
 * row takes 5-7 % less time (alternated in one process), and its 50-pages row no more.
 *
 * V8 excludes functions from optimization by name, process-wide (`--turbo-filter`,
 * `--maglev-filter`, here with a prefix): the guest's freezes have names no other code has. A
 * process started with a filter of its own keeps it.
 */
import v8 from 'node:v8';

/** What the names of the guest's freezes (guest/bootstrap.ts) begin with: the functions the filters name. */
export const GUEST_FREEZE_PREFIX = 'ptcGuestFreeze';

let applied = false;

/** Sets the filters once, before the first isolate (its code cache is made under the flags it will run with). */
export function keepGuestFreezeUnoptimized(): void {
  if (applied) return;
  applied = true;
  if (process.execArgv.some((arg) => /^--(turbo|maglev)[-_]filter\b/.test(arg))) return;
  v8.setFlagsFromString(`--turbo-filter=-${GUEST_FREEZE_PREFIX}*`);
  v8.setFlagsFromString(`--maglev-filter=-${GUEST_FREEZE_PREFIX}*`);
}
