/**
 * Schema types (docs/architecture.md, "Schemas"): the author DSL (`ValueSchemaSpec`,
 * `ParameterSchemaSpec`), the raw subset it compiles to (`JsonSchemaNode`),
 * and static inference (`InferArgs`, `InferValue`).
 */
import type { JsonValue } from '../json.ts';

/** Annotations allowed on every node; values must be lossless JSON. */
export interface SchemaAnnotations {
  readonly description?: string;
  readonly title?: string;
  readonly default?: JsonValue;
  readonly examples?: readonly JsonValue[];
}

export interface StringSpec extends SchemaAnnotations {
  readonly type: 'string';
  readonly enum?: readonly string[];
  readonly const?: string;
}
export interface NumberSpec extends SchemaAnnotations {
  readonly type: 'number' | 'integer';
  readonly enum?: readonly number[];
  readonly const?: number;
}
export interface BooleanSpec extends SchemaAnnotations {
  readonly type: 'boolean';
  readonly enum?: readonly boolean[];
  readonly const?: boolean;
}
export interface NullSpec extends SchemaAnnotations {
  readonly type: 'null';
  readonly enum?: readonly null[];
  readonly const?: null;
}
export interface ArraySpec extends SchemaAnnotations {
  readonly type: 'array';
  readonly items?: ValueSchemaSpec;
}
export interface ObjectSpec extends SchemaAnnotations {
  readonly type: 'object';
  readonly properties?: ParameterSchemaSpec;
  /** Mandatory on every explicit object node: say whether extra keys are allowed. */
  readonly additionalProperties: boolean;
}
/** Any lossless JSON value; compiles to `{}`. */
export interface JsonSpec extends SchemaAnnotations {
  readonly type: 'json';
}
/** A value must match exactly one branch. */
export interface OneOfSpec extends SchemaAnnotations {
  readonly oneOf: readonly [ValueSchemaSpec, ValueSchemaSpec, ...ValueSchemaSpec[]];
}

export type ValueSchemaSpec =
  | StringSpec
  | NumberSpec
  | BooleanSpec
  | NullSpec
  | ArraySpec
  | ObjectSpec
  | JsonSpec
  | OneOfSpec;

/** A property entry: a value schema, required when it says `required: true`. */
export type PropertySpec = ValueSchemaSpec & { readonly required?: true };

/** The parameter root: a property map. The implicit root object stays open. */
export type ParameterSchemaSpec = { readonly [key: string]: PropertySpec };

/** The raw JSON Schema subset. Anything else is refused at registration. */
export interface JsonSchemaNode {
  type?: 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';
  oneOf?: JsonSchemaNode[];
  properties?: { [key: string]: JsonSchemaNode };
  required?: string[];
  additionalProperties?: boolean;
  items?: JsonSchemaNode;
  enum?: JsonValue[];
  const?: JsonValue;
  description?: string;
  title?: string;
  default?: JsonValue;
  examples?: JsonValue[];
}

// ---------------------------------------------------------------------------
// Static inference
// ---------------------------------------------------------------------------

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type InferScalar<S, Base> = S extends { readonly const: infer C }
  ? C
  : S extends { readonly enum: readonly (infer E)[] }
    ? E
    : Base;

type RequiredKeys<P extends ParameterSchemaSpec> = {
  [K in keyof P]: P[K] extends { readonly required: true } ? K : never;
}[keyof P];
type OptionalKeys<P extends ParameterSchemaSpec> = Exclude<keyof P, RequiredKeys<P>>;

type InferProperties<P extends ParameterSchemaSpec> = Simplify<
  { [K in RequiredKeys<P>]: InferValue<P[K]> } & { [K in OptionalKeys<P>]?: InferValue<P[K]> }
>;

type InferOneOf<B> = B extends readonly [infer H, ...infer R] ? InferValue<H> | InferOneOf<R> : never;

/**
 * The static type of a value matching `S`. The wide `ValueSchemaSpec` itself
 * (seen while the checker infers a generic) is `JsonValue`: expanding it would
 * recurse without end.
 */
export type InferValue<S> = ValueSchemaSpec extends S
  ? JsonValue
  : S extends { readonly oneOf: infer B }
  ? InferOneOf<B>
  : S extends { readonly type: 'string' }
    ? InferScalar<S, string>
    : S extends { readonly type: 'number' | 'integer' }
      ? InferScalar<S, number>
      : S extends { readonly type: 'boolean' }
        ? InferScalar<S, boolean>
        : S extends { readonly type: 'null' }
          ? null
          : S extends { readonly type: 'array'; readonly items: infer I }
            ? InferValue<I>[]
            : S extends { readonly type: 'array' }
              ? JsonValue[]
              : S extends { readonly type: 'object' }
                ? InferObject<S>
                : S extends { readonly type: 'json' }
                  ? JsonValue
                  : never;

type InferObject<S> = S extends { readonly properties: infer P extends ParameterSchemaSpec }
  ? ParameterSchemaSpec extends P
    ? { [key: string]: JsonValue }
    : S extends { readonly additionalProperties: true }
      ? InferProperties<P> & { [key: string]: JsonValue | undefined }
      : InferProperties<P>
  : S extends { readonly additionalProperties: true }
    ? { [key: string]: JsonValue }
    : Record<string, never>;

/** The static type of the arguments object a parameter root accepts. */
export type InferArgs<P extends ParameterSchemaSpec> = ParameterSchemaSpec extends P
  ? { [key: string]: JsonValue }
  : InferProperties<P>;
