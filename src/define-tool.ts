/**
 * `defineTool`: a typed definition from DSL schemas, compiled to the raw subset.
 */
import type { ContentBlock } from './content.ts';
import type { FrozenJson, JsonValue } from './json.ts';
import { compileParameters, compileValue } from './schema/compile.ts';
import { SchemaError } from './schema/schema-error.ts';
import type { InferArgs, InferValue, ParameterSchemaSpec, ValueSchemaSpec } from './schema/types.ts';
import type { ApprovalCall, RevertCall, ToolDefinition, ToolExec } from './tool.ts';
import { definitionShapeProblems } from './definition-rules.ts';

export interface ToolSpec<P extends ParameterSchemaSpec, O extends ValueSchemaSpec> {
  name: string;
  description: string;
  parameters: P;
  output: {
    schema: O;
    render(args: FrozenJson<InferArgs<P>>, value: FrozenJson<InferValue<O>>): ContentBlock[];
    presentationMeta?(args: FrozenJson<InferArgs<P>>, value: FrozenJson<InferValue<O>>): JsonValue;
  };
  /** May return frozen values it was given (arguments, other tools' values): the registry snapshots the result. */
  execute(args: FrozenJson<InferArgs<P>>, exec: ToolExec<FrozenJson<InferArgs<P>>>): Promise<InferValue<O> | FrozenJson<InferValue<O>>>;
  isConcurrencySafe?(args: FrozenJson<InferArgs<P>>): boolean;
  timeoutMs?: number;
  /** A call from a program waits for a person's decision first: the run pauses (see {@link ToolDefinition.needsApproval}). */
  needsApproval?: boolean | ((args: FrozenJson<InferArgs<P>>, call: ApprovalCall) => boolean | Promise<boolean>);
  /** `'reexecute'`: a resumed run runs this tool's earlier calls again instead of answering them from its journal. */
  replay?: 'reexecute';
  /** Undoes one applied call on `codeMode.rollback`. */
  revert?(args: FrozenJson<InferArgs<P>>, value: FrozenJson<InferValue<O>>, call: RevertCall): Promise<void> | void;
}

/**
 * Builds an ordinary {@link ToolDefinition} from DSL schemas: `parameters`
 * compiles to an open root object node, `output.schema` to the raw subset,
 * and `validateArguments` is true, so the registry validates arguments before
 * `execute`. Throws `SchemaError` listing every violation of both schemas at
 * once (paths `parameters.…` and `output.schema.…`). The spec is never
 * mutated; the definition and its output declaration are frozen, and the
 * callbacks are called with the spec (or `spec.output`) as `this`.
 */
export function defineTool<const P extends ParameterSchemaSpec, const O extends ValueSchemaSpec>(
  spec: ToolSpec<P, O>,
): ToolDefinition<FrozenJson<InferArgs<P>>, FrozenJson<InferValue<O>>> {
  type Args = FrozenJson<InferArgs<P>>;
  type Value = FrozenJson<InferValue<O>>;
  const problems = definitionShapeProblems(spec as unknown);
  if (problems.length > 0) throw new SchemaError(problems, 'tool definition');
  const parameters = compileParameters(spec.parameters, 'parameters');
  const schema = compileValue(spec.output.schema, 'output.schema');
  const violations = [...parameters.violations, ...schema.violations];
  if (violations.length > 0) throw new SchemaError(violations, `schema for tool ${JSON.stringify(spec.name)}`);

  // Built on untyped views: the generic types were checked where defineTool was called,
  // and comparing the inferred types again here is too deep for the checker.
  const source = spec as unknown as Loose & { execute(this: unknown, ...args: unknown[]): unknown };
  const output = spec.output as unknown as Loose;
  const { presentationMeta, render } = output;
  const { isConcurrencySafe } = source;
  const frozenOutput: Record<string, unknown> = {
    schema: schema.node,
    render: (args: unknown, value: unknown) => render!.call(output, args, value),
  };
  if (presentationMeta !== undefined) {
    frozenOutput.presentationMeta = (args: unknown, value: unknown) => presentationMeta.call(output, args, value);
  }
  const definition: Record<string, unknown> = {
    name: spec.name,
    description: spec.description,
    parameters: parameters.node,
    validateArguments: true,
    output: Object.freeze(frozenOutput),
    execute: (args: unknown, exec: unknown) => source.execute.call(spec, args, exec),
  };
  if (isConcurrencySafe !== undefined) definition.isConcurrencySafe = (args: unknown) => isConcurrencySafe.call(spec, args);
  if (spec.timeoutMs !== undefined) definition.timeoutMs = spec.timeoutMs;
  const { needsApproval, revert } = source;
  if (typeof needsApproval === 'function') definition.needsApproval = (args: unknown, call: unknown) => needsApproval.call(spec, args, call);
  else if (needsApproval !== undefined) definition.needsApproval = needsApproval;
  if (spec.replay !== undefined) definition.replay = spec.replay;
  if (revert !== undefined) definition.revert = (args: unknown, value: unknown, call: unknown) => revert.call(spec, args, value, call);
  return Object.freeze(definition) as unknown as ToolDefinition<Args, Value>;
}

interface Loose {
  render?(this: unknown, ...args: unknown[]): unknown;
  presentationMeta?(this: unknown, ...args: unknown[]): unknown;
  isConcurrencySafe?(this: unknown, ...args: unknown[]): unknown;
  needsApproval?: boolean | ((this: unknown, ...args: unknown[]) => unknown);
  revert?(this: unknown, ...args: unknown[]): unknown;
}

