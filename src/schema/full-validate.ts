/**
 * Validation against a whole JSON Schema, outside the raw subset: for
 * definitions that own their input checks (an OpenAPI operation, an AI SDK
 * tool's JSON Schema). Keywords ajv knows are checked (`minLength`,
 * `pattern`, `anyOf`, `$ref`, OpenAPI's `nullable`, …); `format` is shown in
 * the typings but not checked; unknown keywords are ignored.
 */
import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';

export type SchemaDialect = 'draft-07' | '2020-12';

/** Returns `path: message` lines, `[]` when the value is valid. */
export type FullValidate = (value: unknown, root: string) => string[];

const OPTIONS = {
  allErrors: true,
  strict: false,
  strictNumbers: true,
  validateSchema: false,
  validateFormats: false,
  useDefaults: false,
  coerceTypes: false,
  removeAdditional: false,
  logger: false,
} as const;

/** Most violations listed in one message; the rest are counted. */
const MAX_LISTED = 8;

/** One ajv instance for a family of schemas that refer to each other (`$ref` into `documents`, added under their `$id`). */
export function createSchemaFamily(dialect: SchemaDialect, documents: Record<string, AnySchema> = {}): { compile(schema: AnySchema): FullValidate } {
  let ajv: Ajv | undefined;
  return {
    compile(schema) {
      // Made on first use: adding a large document (a whole OpenAPI spec) walks it.
      if (ajv === undefined) {
        ajv = dialect === '2020-12' ? new Ajv2020(OPTIONS) : new Ajv(OPTIONS);
        for (const [id, document] of Object.entries(documents)) ajv.addSchema(document, id);
      }
      const compiled = ajv.compile(schema);
      return (value, root) => (compiled(value) ? [] : describe(compiled, root));
    },
  };
}

/** Compiles one self-contained schema. Throws when ajv cannot compile it. */
export function compileFullSchema(schema: AnySchema, dialect: SchemaDialect = 'draft-07'): FullValidate {
  return createSchemaFamily(dialect).compile(schema);
}

function describe(compiled: ValidateFunction, root: string): string[] {
  const errors = (compiled.errors ?? []) as ErrorObject[];
  const lines = [...new Set(errors.map((error) => `${root}${pathOf(error.instancePath)}: ${messageOf(error)}`))];
  return lines.length > MAX_LISTED ? [...lines.slice(0, MAX_LISTED), `… and ${lines.length - MAX_LISTED} more`] : lines;
}

function pathOf(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((key) => (/^\d+$/.test(key) ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`))
    .join('');
}

function messageOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') return `has an unknown key ${JSON.stringify(params.additionalProperty)}: remove it`;
  if (error.keyword === 'required') return `is missing the required key ${JSON.stringify(params.missingProperty)}`;
  if (error.keyword === 'enum') return `must be one of ${JSON.stringify(params.allowedValues)}`;
  return error.message ?? `fails ${error.keyword}`;
}
