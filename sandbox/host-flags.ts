/**
 * The Node flags of a process that makes isolated-vm isolates: `--no-node-snapshot`, which
 * isolated-vm asks for, and `--no-wasm-code-gc`, without which V8's collection of dead
 * WebAssembly code can deadlock the process against an isolate being disposed
 * (docs/architecture.md, "Host flags"). The `ptc` CLI and the process runtime's children start
 * with them; a host that embeds the in-process runtime passes them itself, and Code Mode warns
 * once for each one it lacks ({@link warnMissingHostFlags}).
 */
const HOST_FLAGS: readonly { flag: string; code: string; why: string }[] = [
  { flag: '--no-node-snapshot', code: 'PTC_NO_NODE_SNAPSHOT', why: 'which isolated-vm asks for' },
  { flag: '--no-wasm-code-gc', code: 'PTC_WASM_CODE_GC', why: "so V8's collection of dead WebAssembly code can deadlock the process with an isolate being disposed" },
];

export const ISOLATE_HOST_FLAGS: readonly string[] = HOST_FLAGS.map(({ flag }) => flag);

/** The flags of {@link ISOLATE_HOST_FLAGS} that `execArgv` lacks. */
export function missingHostFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return ISOLATE_HOST_FLAGS.filter((flag) => !execArgv.includes(flag));
}

const warned = new Set<string>();

/**
 * Warns once for each host flag this process lacks, naming it. The library sets no flag of its
 * host's process, and a host may have reasons of its own, so it is warned, not refused. Returns
 * the flags it warned about now.
 */
export function warnMissingHostFlags(execArgv: readonly string[] = process.execArgv): string[] {
  const now = HOST_FLAGS.filter(({ flag }) => !execArgv.includes(flag) && !warned.has(flag));
  for (const { flag, code, why } of now) {
    warned.add(flag);
    process.emitWarning(`this process runs isolated-vm isolates without ${flag}, ${why}: start it with node ${flag}`, { code });
  }
  return now.map(({ flag }) => flag);
}
