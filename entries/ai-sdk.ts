/**
 * `ptc-executor/ai-sdk`: the Vercel AI SDK adapter. Needs the `ai` package
 * (an optional peer dependency): run_code as an AI SDK tool, and existing AI
 * SDK tools as definitions a program can call.
 */
export { createCodeModeTool, contentText } from '../adapters/ai-sdk/code-mode-tool.ts';
export type { CodeModeToolOptions, RunCodeInput } from '../adapters/ai-sdk/code-mode-tool.ts';
export { fromAiSdkTools } from '../adapters/ai-sdk/from-ai-sdk-tools.ts';
