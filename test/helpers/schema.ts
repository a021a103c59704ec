import { compileParameters } from '../../src/schema/compile.ts';
import { SchemaError } from '../../src/schema/schema-error.ts';
import type { JsonSchemaNode, ParameterSchemaSpec } from '../../src/schema/types.ts';

/** `compileParameters` that throws the violations as one SchemaError, as registration reports them. */
export function compileParameterSpec(spec: ParameterSchemaSpec, root = 'parameters'): JsonSchemaNode {
  const { node, violations } = compileParameters(spec, root);
  if (violations.length > 0) throw new SchemaError(violations);
  return node;
}
