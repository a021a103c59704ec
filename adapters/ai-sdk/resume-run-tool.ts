/**
 * A paused run through the AI SDK's tool-approval flow. When run_code's program reaches a call
 * that needs a person, the run pauses and the model is told so; it then calls `resume_run`,
 * which needs approval: the SDK answers with a `tool-approval-request` part (a chat UI shows it
 * as a tool part in state `approval-requested`), and the app sends the person's answer with its
 * next request. Approved: `resume_run` runs, which approves the gated call and resumes the run;
 * its result is the resumed run's outcome (done, failed, or paused again). Denied: the SDK tells
 * the model by itself, and {@link settleDeniedRuns} hands the denial to the paused program.
 */
import { jsonSchema, tool, type ModelMessage, type Tool } from 'ai';
import type { CodeMode, CodeModeToolResult } from '../../src/code-mode/code-mode.ts';
import { PtcError } from '../../src/errors.ts';
import { contentText, createCodeModeTool, RESUME_RUN, resumeHint, type CodeModeToolOptions, type RunCodeInput } from './code-mode-tool.ts';

/** resume_run's arguments. */
export interface ResumeRunInput {
  callId: string;
}

export interface ResumeRunToolOptions {
  /** Who decides, as the run's `run/resumed` event records it. Default `"ai-sdk user"`. */
  by?: string;
}

/**
 * `resume_run`: needs approval (`needsApproval: true`), and on approval approves the gated call
 * of the paused run and resumes it. Put it next to run_code under the key {@link RESUME_RUN}
 * (or use `createCodeModeTools`, which does both).
 */
export function createResumeRunTool(codeMode: Pick<CodeMode, 'decide'>, options: ResumeRunToolOptions = {}): Tool<ResumeRunInput, CodeModeToolResult> {
  const by = options.by ?? 'ai-sdk user';
  return tool({
    description:
      'Asks the user to approve the call a paused run_code program waits for, and on approval resumes the run where it stopped. ' +
      'Pass the callId the paused result names. Returns the resumed run’s result (or another pause).',
    inputSchema: jsonSchema<ResumeRunInput>({
      type: 'object',
      properties: { callId: { type: 'string', description: 'The paused run’s callId, from the run_code result.' } },
      required: ['callId'],
      additionalProperties: false,
    }),
    needsApproval: true,
    execute: async ({ callId }, { abortSignal }): Promise<CodeModeToolResult> => {
      try {
        return await codeMode.decide(callId, { decision: 'approve', by }, abortSignal === undefined ? {} : { signal: abortSignal });
      } catch (error) {
        // An unknown run, or one decided already: the model reads why, not a crash.
        if (error instanceof PtcError) return { status: 'done', isError: true, content: [{ type: 'text', text: error.message }], error: { message: error.message, info: { name: error.name, code: error.code } } };
        throw error;
      }
    },
    toModelOutput: ({ output }) => ({ type: output.isError ? 'error-text' : 'text', value: contentText(output.content) + resumeHint(output, RESUME_RUN) }),
  });
}

/**
 * run_code and resume_run together, under the keys `run_code` and `resume_run`: a paused run's
 * text tells the model to call resume_run. Spread them into `tools`.
 */
export async function createCodeModeTools(
  codeMode: Pick<CodeMode, 'asTool' | 'decide'>,
  options: CodeModeToolOptions & ResumeRunToolOptions = {},
): Promise<{ run_code: Tool<RunCodeInput, CodeModeToolResult>; resume_run: Tool<ResumeRunInput, CodeModeToolResult> }> {
  return {
    run_code: await createCodeModeTool(codeMode, { ...options, resumeTool: RESUME_RUN }),
    resume_run: createResumeRunTool(codeMode, options),
  };
}

/** What {@link settleDeniedRuns} did with one denial. */
export interface SettledDenial {
  callId: string;
  /** The denied program's outcome (it may catch the denial and go on). Absent when the run was already decided. */
  outcome?: CodeModeToolResult;
}

/**
 * Hands every denied `resume_run` approval in `messages` to its paused run: the program's gated
 * call throws `APPROVAL_DENIED` with the person's reason. Call it with the messages of each
 * request before `generateText`/`streamText`; a run decided already is skipped, so repeating a
 * conversation is harmless. The model learns of the denial from the SDK, not from this.
 */
export async function settleDeniedRuns(
  codeMode: Pick<CodeMode, 'decide'>,
  messages: readonly ModelMessage[],
  options: ResumeRunToolOptions & { toolName?: string } = {},
): Promise<SettledDenial[]> {
  const toolName = options.toolName ?? RESUME_RUN;
  const calls = new Map<string, string>();
  const approvals = new Map<string, string>();
  const denied: { approvalId: string; reason?: string }[] = [];
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type === 'tool-call' && part.toolName === toolName) {
        const input = (typeof part.input === 'string' ? safeParse(part.input) : part.input) as Partial<ResumeRunInput> | undefined;
        if (typeof input?.callId === 'string') calls.set(part.toolCallId, input.callId);
      } else if (part.type === 'tool-approval-request') approvals.set(part.approvalId, part.toolCallId);
      else if (part.type === 'tool-approval-response' && !part.approved) denied.push({ approvalId: part.approvalId, ...(part.reason === undefined ? {} : { reason: part.reason }) });
    }
  }
  const settled: SettledDenial[] = [];
  for (const { approvalId, reason } of denied) {
    const toolCallId = approvals.get(approvalId);
    const callId = toolCallId === undefined ? undefined : calls.get(toolCallId);
    if (callId === undefined) continue;
    try {
      const outcome = await codeMode.decide(callId, { decision: 'deny', reason: reason ?? 'denied by the user', by: options.by ?? 'ai-sdk user' });
      settled.push({ callId, outcome });
    } catch (error) {
      if (!(error instanceof PtcError) || (error.code !== 'RUN_NOT_PAUSED' && error.code !== 'RUN_NOT_FOUND')) throw error;
      settled.push({ callId });
    }
  }
  return settled;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
