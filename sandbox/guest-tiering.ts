/**
 * V8's tiering and the guest's freeze of the values it receives. Each run is a fresh context, with
 * maps of its own, so optimized code for the freeze loops serves one run and is thrown away, while
 * its compiles compete for the cores with the run.
 *
 * V8 excludes functions from optimization by name, process-wide (`--turbo-filter`,
 * `--maglev-filter`, here with a prefix): the guest's freezes have names no other code has. The
 * flags belong to the process, so the library never sets them on its own: a host that owns its
 * process opts in, by starting Node with `GUEST_FREEZE_FLAGS` (the `ptc` CLI does, and so do the
 * process runtime's children) or by calling `keepGuestFreezeUnoptimized()` before the first run.
 */
import v8 from 'node:v8';

/** What the names of the guest's freezes (guest/lossless-json.ts) begin with: the functions the filters name. */
export const GUEST_FREEZE_PREFIX = 'ptcGuestFreeze';

/** The Node flags that keep the guest's freezes unoptimized, for a process started with them. */
export const GUEST_FREEZE_FLAGS: readonly string[] = [`--turbo-filter=-${GUEST_FREEZE_PREFIX}*`, `--maglev-filter=-${GUEST_FREEZE_PREFIX}*`];

/** Whether a process started with these Node flags already chose its own optimization filters (which it keeps). */
export function hasOwnOptimizationFilter(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => /^--(turbo|maglev)[-_]filter\b/.test(arg));
}

let applied = false;

/**
 * Opt-in for a host that owns its process: sets the filters in this running process, once. Call
 * it before the first run (an isolate's code cache is made under the flags it will run with); a
 * process started with a filter of its own keeps it.
 */
export function keepGuestFreezeUnoptimized(): void {
  if (applied) return;
  applied = true;
  if (hasOwnOptimizationFilter(process.execArgv)) return;
  for (const flag of GUEST_FREEZE_FLAGS) v8.setFlagsFromString(flag);
}
