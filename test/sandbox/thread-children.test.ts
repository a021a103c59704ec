/**
 * Sandbox children over the thread transport (the in-process runtime's burst
 * threads), through the pool that supervises them: what differs from child
 * processes. A thread shares this process's memory (no RSS ceiling applies
 * to it), and a thread that fails must fail its runs, be replaced, and leave
 * the process up.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveOptions, type ProcessRuntimeOptions } from '../../sandbox/process/options.ts';
import { createChildPoolRuntime, type ProcessRuntime } from '../../sandbox/process/process-runtime.ts';
import { gatedTool, request } from './process-helpers.ts';
import { ISOLATE_HOST_FLAGS } from '../../sandbox/host-flags.ts';

let runtime: ProcessRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

const threads = (options: ProcessRuntimeOptions): ProcessRuntime => createChildPoolRuntime(resolveOptions({ warmPoolSize: 1, ...options }, 'thread'));
const crashingRuntime = new URL('./crashing-runtime.fixture.ts', import.meta.url).href;

describe('sandbox children on threads', () => {
  it('run programs in this process, with no RSS ceiling (the resident set is the whole process’s)', async () => {
    runtime = threads({ children: 1, rssLimitMiB: 1, heartbeatIntervalMs: 20 });
    await runtime.ready();
    expect(runtime.processes().map((child) => child.pid)).not.toContain(process.pid);
    const tool = gatedTool();
    const pending = runtime.run(request('const v = await tools.wait({ n: 1 })\nreturn v.n + 1', { callTool: tool.callTool }));
    await tool.called;
    // Several heartbeats with a process RSS far above 1 MiB: a process child would have been killed by now.
    for (let beats = 0; beats < 5; beats++) await new Promise((resolve) => setTimeout(resolve, 20));
    tool.release({ ok: true, value: { n: 41 } });
    expect(await pending).toMatchObject({ ok: true, resultJson: '42' });
    expect(runtime.status()).toMatchObject({ children: 1, restarts: 0 });
  });

  it('a thread that dies of an uncaught error fails its runs `crashed`, is replaced, and the process stays up', async () => {
    runtime = threads({ children: 1, runtimeModule: crashingRuntime });
    await runtime.ready();
    const tool = gatedTool();
    const crashing = runtime.run(request('await tools.wait({})\nreturn "CRASH_THE_CHILD"', { callTool: tool.callTool }));
    expect(await crashing).toEqual({
      ok: false,
      logs: [],
      failure: { kind: 'crashed', message: 'the sandbox thread died (exit code 1) during the run; run it again' },
    });
    tool.release({ ok: true, value: {} });
    await runtime.ready();
    expect(runtime.status()).toMatchObject({ children: 1, restarts: 1 });
    expect(await runtime.run(request('return 1 + 1'))).toMatchObject({ ok: true, resultJson: '2' });
  });

  // In a process of its own: what is asserted is that process's stdout.
  it('send what they print to stderr, never to this process’s stdout', async () => {
    const probe = fileURLToPath(new URL('./thread-stdout.probe.ts', import.meta.url));
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [...ISOLATE_HOST_FLAGS, probe], { timeout: 60_000 });
    expect(stdout).toBe('');
    expect(stderr).toContain('noisy fixture: a line on the child’s stdout');
    expect(stderr).toMatch(/^outcome \{"ok":true,"resultJson":"2",.*"logs":\[\]\}$/m);
  });

  it('rejects ready() with a clear error when threads cannot start', async () => {
    runtime = threads({ children: 1, runtimeModule: new URL('./no-such-runtime.ts', import.meta.url).href });
    await expect(runtime.ready()).rejects.toThrow(/^the sandbox threads fail to start \(.*\); check the runtime installation$/);
  });
});
