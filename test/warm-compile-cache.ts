/**
 * Fills Node's compile cache (NODE_COMPILE_CACHE, set in vitest.config.ts) before the workers
 * start. The suite starts a few hundred Node processes (CLIs, servers, sandbox children, probes)
 * that load the same TypeScript and dependencies, and a process writes what it compiled only when
 * it exits: on a fresh clone the first wave of them would all compile cold. V8 keeps one cache
 * per set of flags, so one short process per set the suite uses imports the module graphs those
 * processes load, writes the cache and exits.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ISOLATE_HOST_FLAGS } from '../sandbox/host-flags.ts';
import { childExecArgv } from '../sandbox/process/transport.ts';
import { CLI_NODE_FLAGS } from './helpers/serve-cli.ts';

const root = new URL('..', import.meta.url).pathname;

const SETS: { flags: readonly string[]; modules: string[] }[] = [
  // `ptc serve`, `ptc run`, `ptc mcp` as the tests start them.
  { flags: CLI_NODE_FLAGS, modules: ['services/cli-main.ts', 'sandbox/in-process-runtime.ts', 'sandbox/process/process-runtime.ts', 'typings/typecheck-pool.ts'] },
  // The process runtime's children (sandbox/process/transport.ts).
  { flags: childExecArgv([]), modules: ['sandbox/process/protocol.ts', 'sandbox/leave-process.ts', 'sandbox/in-process-runtime.ts'] },
  // Probes and examples started with the host flags alone.
  { flags: ISOLATE_HOST_FLAGS, modules: ['entries/index.ts', 'entries/service.ts', 'entries/mcp.ts', 'entries/ai-sdk.ts', 'entries/openapi.ts', 'sandbox/in-process-runtime.ts'] },
];

export default async function setup(): Promise<void> {
  if (process.env.NODE_COMPILE_CACHE === undefined) return;
  await Promise.all(
    SETS.map(({ flags, modules }) => {
      const imports = modules.map((file) => `await import(${JSON.stringify(`${root}${file}`)});`).join('');
      const source = `${imports} (await import('node:module')).flushCompileCache(); process.exit(0);`;
      // A failure here only leaves the cache cold: the tests say what is wrong, not this.
      return promisify(execFile)(process.execPath, [...flags, '--input-type=module', '-e', source], { cwd: root, timeout: 120_000 }).catch(() => undefined);
    }),
  );
}
