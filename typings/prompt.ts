/**
 * `renderPrompt`: the model-facing instructions for writing a run_code program,
 * followed by the typings in a ts block. Markdown.
 */
import { CALL_ERROR_CODES, CALL_ERROR_CODE_LIST, HTTP_CALL_ERROR_NOTE } from './call-error-codes.ts';

/** The run limits the prompt states. Defaults are `DEFAULT_CODE_MODE_LIMITS`; pass the configured ones. */
export interface PromptLimits {
  /** Wall time of a run including nested waits, ms. Default 30,000. */
  timeoutMs: number;
  /** Longest wall time a run may ask for with run_code's `timeoutMs`, ms. Default 600,000. */
  maxTimeoutMs: number;
  /** Isolate heap, MiB. Default 128. */
  memoryMiB: number;
  /** Nested tool calls per run. Default 1,000. */
  maxCalls: number;
  /** Tool calls in flight at once. Default 10. */
  maxParallelCalls: number;
  /** Bytes of logs kept. Default 1 MiB. */
  maxLogBytes: number;
  /** Bytes of the returned value's JSON. Default 16 MiB. */
  maxResultBytes: number;
  /** Bytes of one tool call's argument JSON. Default 4 MiB. */
  maxArgBytes: number;
}

/** Present in typings that bridge MCP tools (typings/generate.ts declares it once). */
const MCP_CONTENT_DECLARATION = 'type McpContentBlock =';

export const DEFAULT_PROMPT_LIMITS: PromptLimits = {
  timeoutMs: 30_000,
  maxTimeoutMs: 600_000,
  memoryMiB: 128,
  maxCalls: 1_000,
  maxParallelCalls: 10,
  maxLogBytes: 1024 * 1024,
  maxResultBytes: 16 * 1024 * 1024,
  maxArgBytes: 4 * 1024 * 1024,
};

/**
 * The prompt without the tools' own typings, for catalogues too large to show:
 * it says to call `search_tools` first, and carries the shared declarations
 * (`JsonValue`, `ToolCallError`, `tools`) that every search result plugs into.
 */
export function renderSearchPrompt(sharedTypings: string, toolCount: number, limits: Partial<PromptLimits> = {}): string {
  const base = renderPrompt(sharedTypings, limits);
  const head = base.slice(0, base.lastIndexOf('The tools:'));
  return [
    head.trimEnd(),
    '',
    `There are ${count(toolCount)} tools, too many to list here. Search before you write code: call \`search_tools\` with a few words` +
      ' saying what you need (such as "create a calendar event") to get the typings of the best matching tools (their' +
      ' `ToolArgsMap` and `ToolOutputMap` entries, each with its description). Call only tools a search returned, exactly as typed there.',
    '',
    'Declarations shared by every tool:',
    '',
    fenced(sharedTypings.trimEnd(), 'ts'),
    '',
  ].join('\n');
}

export function renderPrompt(typings: string, limits: Partial<PromptLimits> = {}): string {
  const l = { ...DEFAULT_PROMPT_LIMITS, ...limits };
  const codes = [
    ...CALL_ERROR_CODE_LIST.map((code) => `  - \`${code}\`: ${CALL_ERROR_CODES[code]}.`),
    `  - \`HTTP_<status>\`: ${HTTP_CALL_ERROR_NOTE}.`,
  ];
  return [
    '## Writing code for run_code',
    '',
    'Call the `run_code` tool with a program. The program is the body of an async function:',
    '',
    '- Use `await` anywhere at the top level. `return <value>` ends the program and returns the value to you.',
    '- Every tool is an async function on `tools`, typed below: `const value = await tools.name(args)`.' +
      ' Names that are not identifiers are called as `tools["my-tool"](args)`.',
    '- A tool takes exactly one argument: a JSON object matching `ToolArgsMap[name]` (`{}` when it takes none).' +
      ' It must be lossless JSON: no `undefined`, functions, `NaN`, `Infinity`, `-0`, `Date`s, class instances, sparse arrays or cycles.',
    '- A tool resolves to its canonical value, `ToolOutputMap[name]`: validated JSON data, not display text, and deep-frozen' +
      ' (copy it, `{ ...value }` or `[...list]`, before changing it).',
    ...(typings.includes(MCP_CONTENT_DECLARATION)
      ? [
          '- Tools bridged from MCP servers resolve to `{ content, structuredContent? }`, `content` a list of `McpContentBlock`:' +
            ' narrow a block on its `type` before reading it: `const [block] = r.content; if (block?.type === "text") console.log(block.text);`.',
        ]
      : []),
    '- A failed call rejects with a `ToolCallError` (`toolName`, `code`, `callId`, `message`). Catch it to recover; its `code` is one of:',
    ...codes,
    '- Independent calls run concurrently: start them together with `Promise.all`. Await one before the next only when it needs the result.',
    '- A tool marked "needs approval" may pause the run until a person decides: write the program as usual (the run resumes where it paused,' +
      ' with the same `Date.now()` and `Math.random()` values); a denied call throws `APPROVAL_DENIED`, which you may catch.',
    '- Only two things reach you: the value you `return` and what you print with `console.log`.' +
      ' Tool values you neither print nor return are not shown to you: print or return what you need, summarised rather than whole.',
    '- TypeScript is accepted if it is erasable (no `enum`, `namespace` or parameter properties); plain JavaScript is too.',
    '- Available: the standard JavaScript built-ins, `console`, `setTimeout`/`clearTimeout`, `tools` and `ToolCallError`.' +
      ' Not available: `import`/`require`, `process`, `fetch` or any other network, the file system except through tools, `WebAssembly`.',
    `- Limits per run: ${duration(l.timeoutMs)} of wall time, waiting for tools included (pass run_code a \`timeoutMs\` of up to` +
      ` ${duration(l.maxTimeoutMs)} for a longer run), ${l.memoryMiB} MiB of memory,` +
      ` ${count(l.maxCalls)} tool calls (${count(l.maxParallelCalls)} at a time), ${bytes(l.maxLogBytes)} of logs,` +
      ` ${bytes(l.maxResultBytes)} of returned value. Past a limit the run fails and you get its logs.` +
      ` One tool call's argument may be at most ${bytes(l.maxArgBytes)} of JSON: a larger one fails that call with \`INVALID_ARGS\`; split the data over several calls.`,
    '',
    'For example:',
    '',
    '```ts',
    'try {',
    '  const [first, second] = await Promise.all([tools.someTool({ key: "a" }), tools.someTool({ key: "b" })]);',
    '  return { first, second };',
    '} catch (error) {',
    '  if (error instanceof ToolCallError) return `${error.toolName} failed (${error.code}): ${error.message}`;',
    '  throw error;',
    '}',
    '```',
    '',
    'The tools:',
    '',
    fenced(typings.trimEnd(), 'ts'),
    '',
  ].join('\n');
}

/** A code fence longer than any backtick run in `text`, so a description cannot close it. */
function fenced(text: string, language: string): string {
  const longest = (text.match(/`+/g) ?? []).reduce((max, run) => Math.max(max, run.length), 0);
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${text}\n${fence}`;
}

function duration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Number((ms / 1000).toFixed(1))} s`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function bytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${count(n)} bytes`;
}
