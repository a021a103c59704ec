/**
 * A paused run through the AI SDK's tool-approval flow, with the real `ai` package and its mock
 * model: the docs' example runs as written, a denial reaches the paused program, and an AI SDK
 * tool's `needsApproval` gates its calls inside programs.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { generateText, stepCountIs, tool, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCodeMode, createMemoryEventSink, createToolRegistry, type ComposedCodeMode } from '../../entries/index.ts';
import { createCodeModeTools, fromAiSdkTools, settleDeniedRuns } from '../../entries/ai-sdk.ts';
import { ISOLATE_HOST_FLAGS } from '../../sandbox/host-flags.ts';

const root = new URL('../..', import.meta.url).pathname;
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

let codeMode: ComposedCodeMode | undefined;
afterEach(async () => {
  await codeMode?.close();
  codeMode = undefined;
});

describe('durable runs with the AI SDK', () => {
  it('the example in docs/embedding.md runs as written and prints what its comments promise', async () => {
    const doc = await readFile(join(root, 'docs/embedding.md'), 'utf8');
    const example = /### Approvals through the AI SDK\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    const entry = (name: string) => pathToFileURL(join(root, 'entries', name)).href;
    const source = example!.replace("from 'ptc-executor/ai-sdk'", `from '${entry('ai-sdk.ts')}'`).replace("from 'ptc-executor'", `from '${entry('index.ts')}'`);
    // In a project of its own whose node_modules is this repository's, so `ai` and `zod` resolve;
    // not inside the repository, which the packed-package test copies meanwhile.
    const dir = await mkdtemp(join(tmpdir(), 'ptc-doc-example-'));
    try {
      await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));
      const file = join(dir, 'example.mts');
      await writeFile(file, source);
      const { stdout } = await promisify(execFile)(process.execPath, [...ISOLATE_HOST_FLAGS, file], { timeout: 60_000 });
      const promised = [...example!.matchAll(/console\.log\(.*\); \/\/ (.*)\n/g)].map((match) => match[1]);
      expect(promised).toHaveLength(2);
      expect(stdout.trim().split('\n')).toEqual(promised);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a denied resume_run hands the denial to the paused program, once, and the model reads the denial', async () => {
    const refunded: string[] = [];
    const refund = tool({
      description: 'Refunds an order.',
      inputSchema: z.object({ order: z.string() }),
      // A function: only large orders need a person.
      needsApproval: async ({ order }) => order.startsWith('BIG'),
      execute: async ({ order }) => (refunded.push(order), { refunded: order }),
    });
    const registry = createToolRegistry({ eventSink: createMemoryEventSink() });
    for (const definition of fromAiSdkTools({ refund })) registry.register(definition);
    codeMode = createCodeMode({ registry, limits: { timeoutMs: 20_000 } });
    const tools = await createCodeModeTools(codeMode, { by: 'alice' });
    const code = [
      "const small = await tools.refund({ order: 'A-1' });",
      "try { await tools.refund({ order: 'BIG-2' }); } catch (e) { return { small: small.refunded, denied: e.code, why: e.message }; }",
      "return 'refunded both';",
    ].join('\n');
    const prompts: Parameters<MockLanguageModelV4['doGenerate']>[0]['prompt'][] = [];
    const model = new MockLanguageModelV4({
      doGenerate: async ({ prompt }) => {
        prompts.push(prompt);
        const last = prompt.at(-1)!;
        const part = last.role === 'tool' ? last.content[0] : undefined;
        const text = part?.type === 'tool-result' && part.output.type === 'text' ? part.output.value : '';
        const callTool = (toolName: string, input: object) => ({
          content: [{ type: 'tool-call' as const, toolCallId: `call-${prompt.length}`, toolName, input: JSON.stringify(input) }],
          finishReason: { unified: 'tool-calls' as const, raw: undefined },
          usage,
          warnings: [],
        });
        if (last.role === 'user') return callTool('run_code', { code, description: 'refunds' });
        const paused = /"callId": "([^"]+)"/.exec(text);
        if (paused) return callTool('resume_run', { callId: paused[1] });
        return { content: [{ type: 'text' as const, text: 'ok' }], finishReason: { unified: 'stop' as const, raw: undefined }, usage, warnings: [] };
      },
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Refund A-1 and BIG-2.' }];
    const first = await generateText({ model, tools, stopWhen: stepCountIs(5), messages });
    messages.push(...first.response.messages);
    // The small refund ran; the big one waits, and the model was told to ask through resume_run.
    expect(refunded).toEqual(['A-1']);
    const pausedOutput = first.steps[0].toolResults[0].output as { status: string; paused: { callId: string; pending: { toolName: string; args: unknown }[] } };
    expect(pausedOutput).toMatchObject({ status: 'paused', paused: { pending: [{ seq: 2, toolName: 'refund', args: { order: 'BIG-2' } }] } });
    const request = first.content.find((part) => part.type === 'tool-approval-request');
    expect(request?.toolCall).toMatchObject({ toolName: 'resume_run', input: { callId: pausedOutput.paused.callId } });
    expect(await codeMode.pending()).toHaveLength(1);

    messages.push({ role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request!.approvalId, approved: false, reason: 'too large' }] });
    const settled = await settleDeniedRuns(codeMode, messages);
    expect(settled).toHaveLength(1);
    expect(settled[0].outcome).toMatchObject({ status: 'done', isError: false, value: { result: { small: 'A-1', denied: 'APPROVAL_DENIED' } } });
    expect((settled[0].outcome?.value?.result as { why: string }).why).toContain('too large');
    // The denied call never ran, and the journaled one did not run again.
    expect(refunded).toEqual(['A-1']);
    expect(await codeMode.pending()).toEqual([]);
    // The same conversation again: the run is decided already, so nothing happens.
    expect(await settleDeniedRuns(codeMode, messages)).toEqual([{ callId: pausedOutput.paused.callId }]);

    const second = await generateText({ model, tools, stopWhen: stepCountIs(5), messages });
    expect(second.text).toBe('ok');
    const denial = prompts.at(-1)!.find((message) => message.role === 'tool')?.content.find((part) => part.type === 'tool-result' && part.toolName === 'resume_run');
    expect(denial).toMatchObject({ output: { type: 'execution-denied', reason: 'too large' } });
  });

  it('resume_run on a run that is not paused tells the model why instead of failing the step', async () => {
    const registry = createToolRegistry({ eventSink: createMemoryEventSink() });
    codeMode = createCodeMode({ registry, limits: { timeoutMs: 20_000 } });
    const { resume_run } = await createCodeModeTools(codeMode);
    const output = await resume_run.execute!({ callId: 'nothing-paused' }, { toolCallId: 't', messages: [], context: undefined as never });
    expect(output).toMatchObject({ status: 'done', isError: true, error: { info: { code: 'RUN_NOT_FOUND' } } });
  });
});
