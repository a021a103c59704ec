/**
 * Durable runs: resuming a 100-call program paused at its last call against the original run
 * (up to the pause), and the RSS that 1,000 paused runs add (journals in a data folder, as the
 * service keeps them, and in memory, the library's default). Prints figures; asserts nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createCodeModeCore, type CodeMode } from '../src/code-mode/code-mode.ts';
import { createFileJournalStore } from '../src/code-mode/file-journal-store.ts';
import type { JournalStore } from '../src/code-mode/journal-store.ts';
import { createMemoryJournalStore } from '../src/code-mode/memory-journal-store.ts';
import { defineTool } from '../src/define-tool.ts';
import { createMemoryEventSink } from '../src/event-sinks/memory-sink.ts';
import { createToolRegistry } from '../src/registry.ts';
import type { SandboxRuntime } from '../src/sandbox-runtime.ts';
import type { ToolRegistry } from '../src/tool.ts';
import { createInProcessRuntime } from '../sandbox/in-process-runtime.ts';
import { median, type BenchSection } from './section.ts';
import { echoTool } from './workloads.ts';

const ROUNDS = 40;
const PAUSED_RUNS = 1_000;
/** 99 echo calls, then the gated one: the run pauses at its 100th call. */
const PROGRAM = 'let sum = 0;\nfor (let i = 0; i < 99; i++) sum += await tools.echo({ i });\nawait tools.gate({});\nreturn sum;';

const gate = defineTool({
  name: 'gate',
  description: 'Needs approval.',
  parameters: {},
  output: { schema: { type: 'null' }, render: () => [] },
  needsApproval: true,
  execute: async () => null,
});

/** The RSS rows keep no events: a memory sink would hold every run's events, which is not what a paused run costs. */
function setup(runtime: SandboxRuntime, journal: JournalStore, events: boolean): { registry: ToolRegistry; codeMode: CodeMode } {
  const registry = createToolRegistry(events ? { eventSink: createMemoryEventSink() } : {});
  registry.register(echoTool(defineTool));
  registry.register(gate);
  return { registry, codeMode: createCodeModeCore({ registry, runtime, journal }) };
}

let nextRun = 0;
async function pause(registry: ToolRegistry): Promise<string> {
  const callId = `bench-${++nextRun}`;
  const result = await registry.dispatch({ name: 'run_code', arguments: { code: PROGRAM, description: 'bench' }, callId, sessionId: 'bench' });
  if (result.isError || (result.value as { paused?: unknown }).paused === undefined) throw new Error('bench program did not pause');
  return callId;
}

function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

export const section: BenchSection = {
  name: 'durable',
  description: 'durable runs: resume by replay against the original run, RSS of paused runs',
  nodeFlags: ['--max-semi-space-size=16'],
  async run() {
    const runtime = createInProcessRuntime({ warmPoolSize: 2, burstThreads: 0 });
    const dir = await mkdtemp(join(tmpdir(), 'ptc-bench-journal-'));
    try {
      await runtime.ready();
      const { registry, codeMode } = setup(runtime, createMemoryJournalStore(), true);
      for (let i = 0; i < 20; i++) await codeMode.decide(await pause(registry), { decision: 'approve' });
      const original: number[] = [];
      const resumed: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        let start = performance.now();
        const callId = await pause(registry);
        original.push(performance.now() - start);
        start = performance.now();
        const outcome = await codeMode.decide(callId, { decision: 'approve' });
        resumed.push(performance.now() - start);
        if (outcome.isError) throw new Error('bench resume failed');
      }
      const o = median(original);
      const s = median(resumed);
      console.log(`resume of a 100-call program paused at its last call: ${s.toFixed(2)} ms, original run to the pause ${o.toFixed(2)} ms (${(s / o).toFixed(2)}×), medians of ${ROUNDS}`);
      await codeMode.close();

      for (const [label, journal] of [
        ['a data folder', createFileJournalStore({ dir })],
        ['memory', createMemoryJournalStore()],
      ] as const) {
        const paused = setup(runtime, journal, false);
        for (let i = 0; i < 50; i++) await pause(paused.registry);
        await runtime.ready();
        collect();
        const before = process.memoryUsage().rss;
        for (let i = 0; i < PAUSED_RUNS; i++) await pause(paused.registry);
        await runtime.ready();
        collect();
        const after = process.memoryUsage().rss;
        const waiting = (await paused.codeMode.pending()).length;
        console.log(`${PAUSED_RUNS} paused runs, journals in ${label}: RSS +${mib(after - before)} MiB (${waiting} waiting in all)`);
        await paused.codeMode.close();
      }
    } finally {
      await runtime.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
