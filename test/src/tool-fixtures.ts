/** Small raw tool definitions shared by the registry tests. */
import type { JsonSchemaNode } from '../../src/schema/types.ts';
import type { ToolDefinition, ToolExec } from '../../src/tool.ts';

type Args = { readonly [key: string]: unknown };
type Def = ToolDefinition<any, any>;

export const echoParameters: JsonSchemaNode = {
  type: 'object',
  properties: { text: { type: 'string' }, n: { type: 'integer' } },
  required: ['text'],
  additionalProperties: false,
};

export const echoOutput: JsonSchemaNode = {
  type: 'object',
  properties: { text: { type: 'string' } },
  required: ['text'],
  additionalProperties: false,
};

/** `echo`: validates `{ text, n? }`, returns `{ text }`, renders the text. Override any field. */
export function echoTool(overrides: Partial<Def> = {}): Def {
  return {
    name: 'echo',
    description: 'Echo the text back.',
    parameters: echoParameters,
    validateArguments: true,
    output: {
      schema: echoOutput,
      render: (_args: Args, value: { text: string }) => [{ type: 'text', text: value.text }],
    },
    execute: async (args: Args) => ({ text: args.text }),
    ...overrides,
  };
}

/** A tool whose body is the given function; output is any JSON, rendered as JSON text. */
export function bodyTool(name: string, execute: (args: Args, exec: ToolExec) => Promise<unknown>, extra: Partial<Def> = {}): Def {
  return {
    name,
    description: `${name} test tool`,
    parameters: { type: 'object' },
    output: {
      schema: {},
      render: (_args: Args, value: unknown) => [{ type: 'text', text: JSON.stringify(value) }],
    },
    execute,
    ...extra,
  };
}

/** A promise with its resolve exposed, for ordering without sleeps. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void; reject(error: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export function textOf(result: { content: readonly { type: string; text?: string }[] }): string {
  return result.content.map((block) => block.text ?? '').join('\n');
}
