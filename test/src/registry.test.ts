import { describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../src/registry.ts';
import { SchemaError } from '../../src/schema/schema-error.ts';
import { bodyTool, echoTool } from './tool-fixtures.ts';

describe('register', () => {
  it('refuses a definition without output', () => {
    const registry = createToolRegistry();
    const { output: _omitted, ...noOutput } = echoTool();
    expect(() => registry.register(noOutput as never)).toThrow(/output: is missing/);
    expect(registry.schemas()).toEqual([]);
  });

  it('refuses an unsupported raw output schema with every violation in one error', () => {
    const registry = createToolRegistry();
    const bad = echoTool({
      output: {
        schema: { type: 'object', properties: { a: { type: 'string', pattern: '^x' }, b: { type: ['string', 'null'] } }, $ref: '#/x' } as never,
        render: () => [],
      },
    });
    let error: unknown;
    try {
      registry.register(bad);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SchemaError);
    const message = (error as SchemaError).message;
    expect(message).toMatch(/output\.schema\.properties\.a/);
    expect(message).toMatch(/pattern/);
    expect(message).toMatch(/output\.schema\.properties\.b/);
    expect(message).toMatch(/\$ref/);
    expect((error as SchemaError).violations.length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a duplicate name, and accepts it again after dispose', () => {
    const registry = createToolRegistry();
    const dispose = registry.register(echoTool());
    expect(() => registry.register(echoTool())).toThrow(/already registered/);
    dispose();
    const disposeAgain = registry.register(echoTool({ description: 'second' }));
    dispose(); // stale: must not remove the second registration
    expect(registry.schemas().map((s) => s.description)).toEqual(['second']);
    disposeAgain();
    expect(registry.schemas()).toEqual([]);
  });

  it('never mutates the caller’s definition and keeps its own frozen copy', () => {
    const registry = createToolRegistry();
    const definition = echoTool();
    const before = JSON.stringify(definition);
    registry.register(definition);
    expect(Object.isFrozen(definition)).toBe(false);
    expect(JSON.stringify(definition)).toBe(before);
    definition.description = 'changed afterwards';
    (definition.parameters.properties as Record<string, unknown>).extra = { type: 'string' };
    const [schema] = registry.schemas();
    expect(schema.description).toBe('Echo the text back.');
    expect(Object.keys(schema.parameters.properties ?? {})).toEqual(['text', 'n']);
    expect(Object.isFrozen(schema.parameters)).toBe(true);
  });

  it('calls a raw definition’s methods with the definition (or its output) as `this`', async () => {
    const registry = createToolRegistry();
    const definition = {
      ...echoTool(),
      greeting: 'hello',
      async execute(this: { greeting: string }, args: { text: string }) {
        return { text: `${this.greeting} ${args.text}` };
      },
    };
    definition.output = {
      ...definition.output,
      suffix: '!',
      render(this: { suffix: string }, _args: unknown, value: { text: string }) {
        return [{ type: 'text', text: value.text + this.suffix }];
      },
    } as typeof definition.output;
    registry.register(definition);
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'you' } });
    expect(result.content).toEqual([{ type: 'text', text: 'hello you!' }]);
  });

  it('refuses a bad timeoutMs and a non-function execute, listing both', () => {
    const registry = createToolRegistry();
    expect(() => registry.register(echoTool({ timeoutMs: -1, execute: 'nope' as never }))).toThrow(/timeoutMs[\s\S]*execute|execute[\s\S]*timeoutMs/);
  });
});

describe('schemas()', () => {
  it('returns only name, description, parameters and output, sorted, with no callbacks or timeout', () => {
    const registry = createToolRegistry();
    registry.register(echoTool({ name: 'zeta', timeoutMs: 1234, isConcurrencySafe: () => true }));
    registry.register(echoTool({ name: 'alpha' }));
    const schemas = registry.schemas();
    expect(schemas.map((s) => s.name)).toEqual(['alpha', 'zeta']);
    for (const schema of schemas) expect(Object.keys(schema).sort()).toEqual(['description', 'name', 'output', 'parameters']);
    const text = JSON.stringify(schemas);
    expect(text).not.toMatch(/timeout|1234|render|execute|validateArguments/);
    const hasFunction = (x: unknown): boolean =>
      typeof x === 'function' || (typeof x === 'object' && x !== null && Object.values(x).some(hasFunction));
    expect(hasFunction(schemas)).toBe(false);
    expect(schemas[0].output).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    });
  });

  it('drops root decorations such as $schema from a raw output schema', () => {
    const registry = createToolRegistry();
    registry.register(bodyTool('raw', async () => 1, { output: { schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'number' } as never, render: () => [] } }));
    expect(registry.schemas()[0].output).toEqual({ type: 'number' });
  });
});

describe('get()', () => {
  it('reports concurrency safety, defaulting to false and never throwing', () => {
    const registry = createToolRegistry();
    registry.register(echoTool({ name: 'plain' }));
    registry.register(echoTool({ name: 'safe', isConcurrencySafe: (args: { text?: string }) => args.text === 'ok' }));
    registry.register(echoTool({ name: 'broken', isConcurrencySafe: () => { throw new Error('boom'); } }));
    expect(registry.get('plain')?.isConcurrencySafe({ text: 'ok' })).toBe(false);
    expect(registry.get('safe')?.isConcurrencySafe({ text: 'ok' })).toBe(true);
    expect(registry.get('safe')?.isConcurrencySafe({ text: 'no' })).toBe(false);
    expect(registry.get('broken')?.isConcurrencySafe({})).toBe(false);
    expect(registry.get('missing')).toBeUndefined();
  });
});

describe('onChange', () => {
  it('fires after register and dispose, until unsubscribed', () => {
    const registry = createToolRegistry();
    let calls = 0;
    const off = registry.onChange(() => calls++);
    const dispose = registry.register(echoTool());
    dispose();
    dispose();
    expect(calls).toBe(2);
    off();
    registry.register(echoTool());
    expect(calls).toBe(2);
  });
});
