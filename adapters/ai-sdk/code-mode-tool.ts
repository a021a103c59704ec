/**
 * run_code as an AI SDK tool. Built on `codeMode.asTool()`: the model sees
 * the prompt (with the typings) as the description, its next step receives
 * the rendered content (logs and result, or the failure), and the host gets
 * the canonical value as the tool's output.
 */
import { jsonSchema, tool, type JSONSchema7, type Tool } from 'ai';
import type { CodeMode, CodeModeToolResult } from '../../src/code-mode/code-mode.ts';
import type { ContentBlock } from '../../src/content.ts';

/** run_code's arguments. */
export interface RunCodeInput {
  code: string;
  description: string;
  timeoutMs?: number;
}

export interface CodeModeToolOptions {
  /** The session the runs' events go to. Default `"default"`. */
  sessionId?: string;
  /** The key of a resume tool (`createResumeRunTool`) beside this one: a paused run's text tells the model to call it. Default none. */
  resumeTool?: string;
}

/** The key `createCodeModeTools` gives the resume tool. */
export const RESUME_RUN = 'resume_run';

/** Words appended to what the model reads of a paused run, so it asks through the resume tool. */
export function resumeHint(result: CodeModeToolResult, toolName: string | undefined): string {
  const paused = result.paused;
  if (toolName === undefined || result.status !== 'paused' || paused === undefined) return '';
  return `\nTo ask the user for this decision, call ${toolName} with { "callId": ${JSON.stringify(paused.callId)} } and wait: do not run the program again.`;
}

/**
 * An AI SDK tool running programs in Code Mode; put it under any key of
 * `tools` (`{ run_code: await createCodeModeTool(codeMode) }`). Async because
 * the typings are generated: its description covers the tools registered
 * when it is called, so make it again after registering more. The abort
 * signal the AI SDK passes cancels the run and its nested calls.
 */
export async function createCodeModeTool(codeMode: Pick<CodeMode, 'asTool'>, options: CodeModeToolOptions = {}): Promise<Tool<RunCodeInput, CodeModeToolResult>> {
  const codeTool = await codeMode.asTool();
  return tool({
    description: codeTool.description,
    inputSchema: jsonSchema<RunCodeInput>(codeTool.inputSchema as JSONSchema7),
    execute: (input: RunCodeInput, { abortSignal }): Promise<CodeModeToolResult> =>
      codeTool.execute(input, {
        ...(abortSignal === undefined ? {} : { signal: abortSignal }),
        ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
      }),
    // The model reads the rendered content, never the value object.
    toModelOutput: ({ output }) => ({ type: output.isError ? 'error-text' : 'text', value: contentText(output.content) + resumeHint(output, options.resumeTool) }),
  });
}

/** Content blocks as the text a model reads: text as is, anything else as its JSON. */
export function contentText(content: readonly ContentBlock[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : JSON.stringify(block))).join('\n');
}
