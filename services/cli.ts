#!/usr/bin/env node
/**
 * `ptc`: the command line. isolated-vm needs Node's `--no-node-snapshot`;
 * when it is missing (`node services/cli.ts`, or the installed bin) the CLI
 * replaces itself with the same command plus the flag before loading
 * anything that touches the sandbox.
 */
import { spawn } from 'node:child_process';

const FLAG = '--no-node-snapshot';

if (process.execArgv.includes(FLAG)) {
  const { main } = await import('./cli-main.ts');
  await main(process.argv);
} else {
  const argv = [FLAG, ...process.execArgv, ...process.argv.slice(1)];
  if (typeof process.execve === 'function') {
    // Same pid: signals sent to `ptc` reach the server itself.
    process.execve(process.execPath, [process.execPath, ...argv], process.env);
  } else {
    const child = spawn(process.execPath, argv, { stdio: 'inherit' });
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
    child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
  }
}
