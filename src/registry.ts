/**
 * `createToolRegistry`: registration, hooks and the dispatch pipeline.
 */
import type { ToolEntry } from './around-dispatch.ts';
import { dispatch, type DispatchEnv } from './dispatch.ts';
import type { EventSink, NewToolEvent } from './events.ts';
import { createHookStore } from './hooks.ts';
import { deepFreeze, LossyJsonError, snapshotJson, type JsonValue } from './json.ts';
import { SchemaError } from './schema/schema-error.ts';
import { checkSchemaSubset, normalizeRawSchema } from './schema/subset.ts';
import type { JsonSchemaNode } from './schema/types.ts';
import { createValidator, type Validator } from './schema/validate.ts';
import { resolveSpillOptions, type SpillOptions } from './spill.ts';
import type { AnyToolDefinition, ApprovalCall, RegisteredTool, RevertCall, ToolDefinition, ToolRegistry, ToolSchema } from './tool.ts';
import { definitionShapeProblems } from './definition-rules.ts';

export type { SpillOptions } from './spill.ts';

export interface ToolRegistryOptions {
  /**
   * Receives `tool/result` for outer calls (and nested events from run_code).
   * Each outer dispatch awaits `append` and then `flush(sessionId)` before it
   * returns. Default: no events.
   */
  eventSink?: EventSink;
  /**
   * Called when the sink's `append` or `flush` fails. The dispatch still
   * returns its result (the call happened); the event may be lost. Default:
   * one line on stderr naming the session, call and error (never content).
   */
  onSinkError?(error: unknown, event: NewToolEvent): void;
  /**
   * Spill projection for outer successful text results over
   * `maxInlineBytes` (see {@link SpillOptions}). Default: off.
   */
  spill?: SpillOptions;
}


type Method = (this: unknown, ...args: unknown[]) => unknown;

interface Registration {
  readonly entry: ToolEntry;
  readonly schema: ToolSchema;
  readonly registered: RegisteredTool;
}

export function createToolRegistry(options: ToolRegistryOptions = {}): ToolRegistry {
  const tools = new Map<string, Registration>();
  const hooks = createHookStore();
  const listeners = new Set<() => void>();
  const spill = options.spill === undefined ? undefined : resolveSpillOptions(options.spill);
  let sorted: ToolSchema[] | undefined;

  const env: DispatchEnv = {
    lookup: (name) => tools.get(name)?.entry,
    hooks: hooks.current,
    eventSink: options.eventSink,
    spill,
    onSinkError: options.onSinkError ?? reportSinkError,
  };

  function changed(): void {
    sorted = undefined;
    for (const listener of [...listeners]) {
      try {
        listener();
      } catch (error) {
        console.error(`ptc-executor: a registry change listener threw: ${String((error as Error)?.message ?? error)}`);
      }
    }
  }

  return {
    register(definition) {
      const claimed = (definition as { name?: unknown } | null)?.name;
      if (typeof claimed === 'string' && tools.has(claimed)) {
        throw new Error(`a tool named ${JSON.stringify(claimed)} is already registered: dispose it first to replace it`);
      }
      const registration = compile(definition);
      const { name } = registration.entry;
      if (tools.has(name)) {
        throw new Error(`a tool named ${JSON.stringify(name)} is already registered: dispose it first to replace it`);
      }
      tools.set(name, registration);
      changed();
      let disposed = false;
      return () => {
        if (disposed) return;
        disposed = true;
        // A stale dispose must not remove a later registration of the same name.
        if (tools.get(name) !== registration) return;
        tools.delete(name);
        changed();
      };
    },
    schemas() {
      sorted ??= [...tools.values()].map((r) => r.schema).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return sorted.slice();
    },
    get(name) {
      return tools.get(name)?.registered;
    },
    hook(kind, hook) {
      return hooks.add(kind, hook);
    },
    dispatch(request) {
      return dispatch(env, request);
    },
    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    reportSinkError: env.onSinkError,
    ...(options.eventSink === undefined ? {} : { eventSink: options.eventSink }),
  };
}

function reportSinkError(error: unknown, event: NewToolEvent): void {
  let message: string;
  try {
    message = error instanceof Error ? error.message : String(error);
  } catch {
    message = 'unreadable error';
  }
  console.error(
    `ptc-executor: the event sink lost ${event.type} of session ${event.sessionId}, call ${'callId' in event ? event.callId : '?'}: ${message}`,
  );
}

// ---------------------------------------------------------------------------
// Registration: check everything, collect every violation, keep a frozen copy.
// ---------------------------------------------------------------------------

const approveAlways = (): boolean => true;

function compile(definition: AnyToolDefinition): Registration {
  if (typeof definition !== 'object' || definition === null) {
    throw new TypeError('register needs a tool definition object: build one with defineTool({...})');
  }
  const d = definition as unknown as Record<string, unknown>;
  const name = d.name;
  const label = typeof name === 'string' ? `tool ${JSON.stringify(name)}` : 'tool';
  const problems = definitionShapeProblems(definition);
  const timeoutMs = d.timeoutMs as number | undefined;
  const validateArguments = d.validateArguments === true;
  if (d.validateArguments !== undefined && typeof d.validateArguments !== 'boolean') {
    problems.push('validateArguments: must be a boolean, or omitted');
  }

  const parameters = readSchema(d.parameters, 'parameters', validateArguments, problems);
  if (parameters !== undefined && parameters.type !== 'object') {
    problems.push("parameters: must be an object schema ({ type: 'object', properties, required })");
  }

  const output = d.output as Record<string, unknown> | undefined;
  const outputSchema = typeof output === 'object' && output !== null ? readSchema(output.schema, 'output.schema', true, problems) : undefined;
  const declaredOutput =
    typeof output === 'object' && output !== null && output.unvalidatedSchema !== undefined
      ? readSchema(output.unvalidatedSchema, 'output.unvalidatedSchema', false, problems)
      : undefined;
  if (problems.length > 0) throw new SchemaError(problems, `definition of ${label}`);

  // Callbacks keep the caller's objects as `this` (as defineTool does); the copy holds them, frozen.
  const render = output!.render as Method;
  const presentationMeta = output!.presentationMeta as Method | undefined;
  const execute = d.execute as Method;
  const isConcurrencySafe = d.isConcurrencySafe as Method | undefined;
  const needsApproval = d.needsApproval as boolean | Method | undefined;
  const revert = d.revert as Method | undefined;
  const replay = d.replay as 'reexecute' | undefined;
  const frozenOutput = Object.freeze({
    schema: outputSchema!,
    render: (args: unknown, value: unknown) => render.call(output, args, value),
    ...(presentationMeta === undefined ? {} : { presentationMeta: (args: unknown, value: unknown) => presentationMeta.call(output, args, value) }),
    ...(declaredOutput === undefined ? {} : { unvalidatedSchema: declaredOutput }),
  }) as ToolDefinition<unknown, unknown>['output'];
  const copy = Object.freeze({
    name: name as string,
    description: d.description as string,
    parameters: parameters!,
    validateArguments,
    output: frozenOutput,
    execute: (args: unknown, exec: unknown) => execute.call(definition, args, exec) as Promise<unknown>,
    ...(isConcurrencySafe === undefined ? {} : { isConcurrencySafe: (args: unknown) => isConcurrencySafe.call(definition, args) === true }),
    ...(timeoutMs === undefined ? {} : { timeoutMs: timeoutMs as number }),
  }) as ToolDefinition<unknown, unknown>;

  // Compiled on first use: the schemas are already checked, and a large catalogue (an OpenAPI spec) should not pay every compile at start.
  let outputValidator: Validator | undefined;
  let argsValidator: Validator | undefined;
  const entry: ToolEntry = {
    name: copy.name,
    definition: copy,
    output: frozenOutput as ToolEntry['output'],
    validateValue: (value: JsonValue) => (outputValidator ??= createValidator(outputSchema!)).validate(value, 'value'),
    ...(validateArguments ? { validateArgs: (args: JsonValue) => (argsValidator ??= createValidator(parameters!)).validate(args, 'arguments') } : {}),
    ...(timeoutMs === undefined ? {} : { timeoutMs: timeoutMs as number }),
  };
  const gated = needsApproval === true || typeof needsApproval === 'function';
  const schema: ToolSchema = Object.freeze({
    name: copy.name,
    description: copy.description,
    parameters: parameters!,
    output: outputSchema!,
    ...(declaredOutput === undefined ? {} : { unvalidatedOutput: declaredOutput }),
    ...(gated ? { mayPause: true as const } : {}),
  });
  const concurrencySafe = copy.isConcurrencySafe;
  const registered: RegisteredTool = Object.freeze({
    name: copy.name,
    isConcurrencySafe(args: JsonValue): boolean {
      if (concurrencySafe === undefined) return false;
      try {
        return concurrencySafe(args);
      } catch {
        return false;
      }
    },
    ...(!gated ? {} : { needsApproval: needsApproval === true ? approveAlways : (args: JsonValue, call: ApprovalCall) => needsApproval.call(definition, args, call) as boolean | Promise<boolean> }),
    ...(replay === undefined ? {} : { replay }),
    ...(revert === undefined ? {} : { revert: (args: JsonValue, value: JsonValue, call: RevertCall) => revert.call(definition, args, value, call) as Promise<void> | void }),
  });
  return { entry, schema, registered };
}

/**
 * Snapshots a schema and, when `checked`, holds it to the raw subset (root
 * decorations such as `$schema` are accepted and dropped). Unchecked
 * (raw parameters) schemas pass through as lossless JSON.
 */
function readSchema(node: unknown, path: string, checked: boolean, problems: string[]): JsonSchemaNode | undefined {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) {
    problems.push(`${path}: must be a JSON Schema object`);
    return undefined;
  }
  let snap: JsonValue;
  try {
    snap = snapshotJson(node, path);
  } catch (error) {
    problems.push(error instanceof LossyJsonError ? `${error.violation.path}: ${error.violation.message}` : `${path}: could not be read`);
    return undefined;
  }
  if (!checked) return deepFreeze(snap) as JsonSchemaNode;
  const subset = { allowRootDecorations: true, root: path };
  const violations = checkSchemaSubset(snap, subset);
  if (violations.length > 0) {
    problems.push(...violations);
    return undefined;
  }
  return normalizeRawSchema(snap, subset);
}
