/**
 * `defineTool`: a typed definition from DSL schemas, compiled to the raw subset.
 */
import type { ContentBlock } from './content.ts';
import type { FrozenJson, JsonValue } from './json.ts';
import type { InferArgs, InferValue, ParameterSchemaSpec, ValueSchemaSpec } from './schema/types.ts';
import type { ToolDefinition, ToolExec } from './tool.ts';

export interface ToolSpec<P extends ParameterSchemaSpec, O extends ValueSchemaSpec> {
  name: string;
  description: string;
  parameters: P;
  output: {
    schema: O;
    render(args: FrozenJson<InferArgs<P>>, value: FrozenJson<InferValue<O>>): ContentBlock[];
    presentationMeta?(args: FrozenJson<InferArgs<P>>, value: FrozenJson<InferValue<O>>): JsonValue;
  };
  execute(args: FrozenJson<InferArgs<P>>, exec: ToolExec<FrozenJson<InferArgs<P>>>): Promise<InferValue<O>>;
  isConcurrencySafe?(args: FrozenJson<InferArgs<P>>): boolean;
  timeoutMs?: number;
}

export function defineTool<const P extends ParameterSchemaSpec, const O extends ValueSchemaSpec>(
  spec: ToolSpec<P, O>,
): ToolDefinition<FrozenJson<InferArgs<P>>, FrozenJson<InferValue<O>>> {
  void spec;
  throw new Error('not implemented');
}
