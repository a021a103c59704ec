/**
 * `createCodeModeCore`: Code Mode from injected parts (a registry, a sandbox
 * runtime, optionally a typings service). The package facade's
 * `createCodeMode` fills in the defaults.
 *
 * Modes:
 * - `'code'` (default): tools other than run_code are callable only from a
 *   program; a direct call fails `UNKNOWN_TOOL` telling the model to use run_code.
 * - `'native'`: nothing is restricted and `prompt()` resolves to `''`, so
 *   run_code is not advertised to the model. `runCodeTool` still works for
 *   whoever registers or calls it directly (the service's `POST /v1/run`).
 * - `'both'`: tools are callable directly and from programs; the prompt
 *   advertises run_code.
 */
import type { ToolDefinition, ToolRegistry } from '../tool.ts';
import type { SandboxRuntime } from '../sandbox-runtime.ts';
import { resolveLimits, type CodeModeLimits } from './limits.ts';
import { createRunCodeTool, RUN_CODE, type TypecheckMode } from './run-code-tool.ts';
import { commitOrderHook } from './scheduler.ts';
import type { TypingsService } from './typings-service.ts';

export type CodeModeKind = 'code' | 'native' | 'both';

export interface CodeModeCoreOptions {
  registry: ToolRegistry;
  runtime: SandboxRuntime;
  /** Typings and prompt generator; required for `typings()`, `prompt()` and type-checking. */
  typings?: TypingsService;
  /** Per-run limits; see {@link CodeModeLimits} for each default. */
  limits?: Partial<CodeModeLimits>;
  /** Default `'code'`. */
  mode?: CodeModeKind;
  /**
   * Type-check programs against the tool typings before running them.
   * `'warn'` puts diagnostics at the top of the logs; `'enforce'` fails the
   * run (kind `typecheck`) before any tool runs. Default `'off'`; needs `typings`.
   * The check spends the run's `timeoutMs` (`'warn'`: at most half of it). One
   * that does not complete fails an `'enforce'` run; under `'warn'` the program
   * runs with a log line saying it was not checked.
   */
  typecheck?: TypecheckMode;
  /** Every console line of every run as it is logged (progress streaming). Never throws into the run. */
  onLog?(line: string, call: { callId: string; sessionId: string }): void;
}

export interface CodeMode {
  /** Register it to offer `run_code`. */
  readonly runCodeTool: ToolDefinition;
  /** The `.d.ts` the model is shown for the currently registered tools. */
  typings(): Promise<string>;
  /** Instructions and typings for the model; `''` in `'native'` mode. */
  prompt(): Promise<string>;
  /** Removes the hooks code mode installed on the registry. Does not close the runtime it was given. */
  close(): Promise<void>;
}

export function createCodeModeCore(options: CodeModeCoreOptions): CodeMode {
  const { registry, runtime, typings } = options;
  const limits = resolveLimits(options.limits);
  const mode = options.mode ?? 'code';
  const typecheck = options.typecheck ?? 'off';
  if (!['code', 'native', 'both'].includes(mode)) throw new TypeError(`mode must be 'code', 'native' or 'both' (got ${String(mode)})`);
  if (!['off', 'warn', 'enforce'].includes(typecheck)) throw new TypeError(`typecheck must be 'off', 'warn' or 'enforce' (got ${String(typecheck)})`);
  if (typecheck !== 'off' && typings === undefined) {
    throw new TypeError(`typecheck '${typecheck}' needs a typings service: pass typings, or set typecheck to 'off'`);
  }

  // The checker's threads load TypeScript now rather than on the first run's clock.
  if (typecheck !== 'off') typings?.warm?.();

  const disposers = [registry.hook('tools/execute', commitOrderHook)];
  if (mode === 'code') {
    disposers.push(
      registry.hook('tools/admit', ({ name, nested }) =>
        nested || name === RUN_CODE
          ? undefined
          : `tool ${JSON.stringify(name)} is only callable from a program: call run_code with code such as \`return await tools[${JSON.stringify(name)}]({})\``,
      ),
    );
  }

  const runCodeTool = createRunCodeTool({
    registry,
    runtime,
    limits,
    typecheck,
    ...(typings === undefined ? {} : { typings }),
    ...(options.onLog === undefined ? {} : { onLog: options.onLog }),
  }) as unknown as ToolDefinition;

  const visibleSchemas = () => registry.schemas().filter((schema) => schema.name !== RUN_CODE);
  const needTypings = (): TypingsService => {
    if (typings === undefined) throw new Error('code mode was created without a typings service: pass typings to get typings and a prompt');
    return typings;
  };

  return {
    runCodeTool,
    typings: async () => needTypings().typings(visibleSchemas()),
    prompt: async () => (mode === 'native' ? '' : needTypings().prompt(visibleSchemas())),
    async close() {
      for (const dispose of disposers.splice(0)) dispose();
    },
  };
}
