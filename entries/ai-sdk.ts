/**
 * `ptc-executor/ai-sdk`: the Vercel AI SDK adapter. Needs the `ai` package
 * (an optional peer dependency): run_code as an AI SDK tool, and existing AI
 * SDK tools as definitions a program can call, and a paused run through the
 * SDK's tool-approval flow (`resume_run`).
 */
export { createCodeModeTool, contentText, RESUME_RUN } from '../adapters/ai-sdk/code-mode-tool.ts';
export type { CodeModeToolOptions, RunCodeInput } from '../adapters/ai-sdk/code-mode-tool.ts';
export { createCodeModeTools, createResumeRunTool, settleDeniedRuns } from '../adapters/ai-sdk/resume-run-tool.ts';
export type { ResumeRunInput, ResumeRunToolOptions, SettledDenial } from '../adapters/ai-sdk/resume-run-tool.ts';
export { fromAiSdkTools } from '../adapters/ai-sdk/from-ai-sdk-tools.ts';
