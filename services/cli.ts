#!/usr/bin/env node
/**
 * `ptc`: the command line. It wants a few Node flags, and when one is missing
 * (`node services/cli.ts`, or the installed bin) the CLI replaces itself with
 * the same command plus the flags before loading anything that touches the
 * sandbox:
 * - `--no-node-snapshot` and `--no-wasm-code-gc`: a process that makes isolates
 *   needs them (sandbox/host-flags.ts);
 * - `--max-semi-space-size=16`: under a steady stream of runs V8 grows the
 *   young generation, which stays resident for good; small semi-spaces keep
 *   the server's RSS flat at no measurable cost (docs/service.md).
 *   A `--max-semi-space-size` of your own wins.
 * - V8's optimization filters for the guest's freezes (sandbox/guest-tiering.ts):
 *   the CLI owns its process, so it opts in; filters of your own win.
 */
import { spawn } from 'node:child_process';
import { unsupportedNode } from '../compose/runtime-support.ts';
import { GUEST_FREEZE_FLAGS, hasOwnOptimizationFilter } from '../sandbox/guest-tiering.ts';
import { missingHostFlags } from '../sandbox/host-flags.ts';

// Before anything else loads: on an older Node the sandbox's native addon would fail later, and less clearly.
const tooOld = unsupportedNode();
if (tooOld !== undefined) {
  process.stderr.write(`ptc: ${tooOld}\n`);
  process.exit(1);
}

const missing = [
  ...missingHostFlags(),
  ...(process.execArgv.some((flag) => flag.startsWith('--max-semi-space-size')) ? [] : ['--max-semi-space-size=16']),
  ...(hasOwnOptimizationFilter(process.execArgv) ? [] : GUEST_FREEZE_FLAGS),
];

if (missing.length === 0) {
  const { main } = await import('./cli-main.ts');
  await main(process.argv);
} else {
  const argv = [...missing, ...process.execArgv, ...process.argv.slice(1)];
  if (typeof process.execve === 'function') {
    // Same pid: signals sent to `ptc` reach the server itself.
    process.execve(process.execPath, [process.execPath, ...argv], process.env);
  } else {
    const child = spawn(process.execPath, argv, { stdio: 'inherit' });
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
    child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
  }
}
