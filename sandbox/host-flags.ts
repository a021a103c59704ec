/**
 * The Node flags of a process that makes isolated-vm isolates. The `ptc` CLI and the process
 * runtime's children start with them; a host that embeds the in-process runtime passes them
 * itself, and Code Mode warns once for each one it lacks ({@link warnMissingHostFlags}).
 *
 * - `--no-node-snapshot`: isolated-vm's maintainers ask for it on Node 20 and later (isolates
 *   built from different snapshots in one process crashed on some platforms).
 * - `--no-wasm-code-gc`: V8 collects dead WebAssembly code by posting a task to every isolate
 *   while it holds its WebAssembly engine's lock. isolated-vm's task runner holds a strong
 *   reference to its isolate while it queues that task; if the isolate is being disposed on
 *   another thread at that moment, the queueing drops the last reference, and V8 deletes the
 *   isolate on the collecting thread, which then waits for the lock it already holds. Every
 *   thread that makes or deletes an isolate waits behind it: the whole process hangs, timers and
 *   signal handlers included. Node's TypeScript stripping and HTTP parser are WebAssembly, so a
 *   server meets this under load. Without the collection, code that V8 replaced by optimised code
 *   stays in memory, which the size of the modules bounds.
 */
export const ISOLATE_HOST_FLAGS: readonly string[] = ['--no-node-snapshot', '--no-wasm-code-gc'];

/** The flags of {@link ISOLATE_HOST_FLAGS} that `execArgv` lacks. */
export function missingHostFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return ISOLATE_HOST_FLAGS.filter((flag) => !execArgv.includes(flag));
}

/** Why each host flag matters, as the warning for its absence says it. */
const WARNINGS: Record<string, { code: string; why: string }> = {
  '--no-node-snapshot': { code: 'PTC_NO_NODE_SNAPSHOT', why: 'which isolated-vm asks for' },
  '--no-wasm-code-gc': { code: 'PTC_WASM_CODE_GC', why: "so V8's collection of dead WebAssembly code can deadlock the process with an isolate being disposed" },
};
const warned = new Set<string>();

/**
 * Warns once for each host flag this process lacks, naming it. The suites here pass without
 * them, and a host may have reasons of its own, so it is warned, not refused. Returns the flags
 * it warned about now.
 */
export function warnMissingHostFlags(execArgv: readonly string[] = process.execArgv): string[] {
  const now = missingHostFlags(execArgv).filter((flag) => !warned.has(flag));
  for (const flag of now) {
    warned.add(flag);
    const { code, why } = WARNINGS[flag];
    process.emitWarning(`this process runs isolated-vm isolates without ${flag}, ${why}: start it with node ${flag}`, { code });
  }
  return now;
}
