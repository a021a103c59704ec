import { describe, expect, it } from 'vitest';
import { compileValueSpec, SchemaError } from '../../src/schema/compile.ts';
import { compileParameterSpec } from '../helpers/schema.ts';
import { checkSchemaSubset } from '../../src/schema/subset.ts';
import type { ParameterSchemaSpec, ValueSchemaSpec } from '../../src/schema/types.ts';
import { createValidator } from '../../src/schema/validate.ts';

/** The violations of the SchemaError `run` throws (fails the test if none). */
function violationsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaError);
    return (error as SchemaError).violations;
  }
  throw new Error('expected a SchemaError');
}

/** Builds a DSL spec `depth` arrays deep around a string. */
function deepSpec(depth: number): ValueSchemaSpec {
  let spec: ValueSchemaSpec = { type: 'string' };
  for (let i = 0; i < depth; i++) spec = { type: 'array', items: spec };
  return spec;
}

describe('compileValueSpec: every root kind compiles to the raw subset', () => {
  const cases: [string, ValueSchemaSpec, unknown][] = [
    ['string', { type: 'string' }, { type: 'string' }],
    ['number', { type: 'number' }, { type: 'number' }],
    ['integer', { type: 'integer' }, { type: 'integer' }],
    ['boolean', { type: 'boolean' }, { type: 'boolean' }],
    ['null', { type: 'null' }, { type: 'null' }],
    ['array', { type: 'array', items: { type: 'number' } }, { type: 'array', items: { type: 'number' } }],
    ['array without items', { type: 'array' }, { type: 'array' }],
    [
      'object',
      { type: 'object', additionalProperties: false, properties: { a: { type: 'string', required: true }, b: { type: 'null' } } },
      {
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'null' } },
        required: ['a'],
        additionalProperties: false,
      },
    ],
    ['object without properties', { type: 'object', additionalProperties: true }, { type: 'object', additionalProperties: true }],
    ['json → {}', { type: 'json' }, {}],
    ['json keeps annotations', { type: 'json', description: 'anything', default: null }, { description: 'anything', default: null }],
    [
      'oneOf',
      { oneOf: [{ type: 'string' }, { type: 'null' }], title: 'maybe' },
      { oneOf: [{ type: 'string' }, { type: 'null' }], title: 'maybe' },
    ],
    [
      'scalar literals and annotations',
      { type: 'string', enum: ['a', 'b'], description: 'd', title: 't', default: 'a', examples: ['b'] },
      { type: 'string', enum: ['a', 'b'], description: 'd', title: 't', default: 'a', examples: ['b'] },
    ],
    ['const', { type: 'integer', const: 3 }, { type: 'integer', const: 3 }],
    ['null const', { type: 'null', const: null }, { type: 'null', const: null }],
  ];
  for (const [name, spec, expected] of cases) {
    it(name, () => {
      const node = compileValueSpec(spec);
      expect(node).toStrictEqual(expected);
      expect(checkSchemaSubset(node)).toEqual([]);
      expect(Object.isFrozen(node)).toBe(true);
    });
  }
});

describe('compileParameterSpec', () => {
  it('makes an open root object with the required keys listed', () => {
    const node = compileParameterSpec({
      path: { type: 'string', required: true, description: 'file path' },
      limit: { type: 'integer' },
    });
    expect(node).toStrictEqual({
      type: 'object',
      properties: { path: { type: 'string', description: 'file path' }, limit: { type: 'integer' } },
      required: ['path'],
      additionalProperties: true,
    });
    expect(createValidator(node).validate({ path: 'a', extra: 1 }, 'arguments')).toEqual([]);
  });

  it('compiles an empty map to an open object accepting anything object-shaped', () => {
    expect(compileParameterSpec({})).toStrictEqual({ type: 'object', properties: {}, required: [], additionalProperties: true });
  });

  it('keeps a property named __proto__ as a property (not a prototype) through compile and validation', () => {
    const spec = JSON.parse('{"__proto__": {"type": "string", "required": true}, "b": {"type": "integer"}}') as ParameterSchemaSpec;
    const node = compileParameterSpec(spec);
    expect(Object.getPrototypeOf(node.properties)).toBe(Object.prototype);
    expect(Object.keys(node.properties!)).toEqual(['__proto__', 'b']);
    expect(Object.hasOwn(node.properties!, '__proto__')).toBe(true);
    expect(node.required).toEqual(['__proto__']);
    expect(JSON.stringify(node)).toBe(
      '{"type":"object","properties":{"__proto__":{"type":"string"},"b":{"type":"integer"}},"required":["__proto__"],"additionalProperties":true}',
    );
    const validator = createValidator(node);
    expect(validator.validate(JSON.parse('{"__proto__": "x"}'), 'arguments')).toEqual([]);
    expect(validator.validate(JSON.parse('{"__proto__": 5}'), 'arguments')).toEqual([
      'arguments.__proto__: must be string (got integer)',
    ]);
    expect(validator.validate({}, 'arguments')).toEqual(['arguments.__proto__: is required but missing']);
  });

  it('never mutates the spec and detaches the output from it', () => {
    const spec = {
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, default: ['a'] },
    } as const satisfies ParameterSchemaSpec;
    const before = JSON.stringify(spec);
    const node = compileParameterSpec(spec);
    expect(JSON.stringify(spec)).toBe(before);
    expect(Object.isFrozen(spec.tags)).toBe(false);
    expect(Object.isFrozen(spec.tags.default)).toBe(false);
    expect(node.properties!.tags.default).not.toBe(spec.tags.default);
    expect(node.properties!.tags.items!.enum).not.toBe(spec.tags.items.enum);
  });
});

describe('refusals: every violation at once, each with its path', () => {
  it('refuses an explicit object without additionalProperties', () => {
    expect(violationsOf(() => compileParameterSpec({ opts: { type: 'object', properties: {} } as never }))).toEqual([
      expect.stringMatching(/^parameters\.opts: an explicit object needs `additionalProperties: true` or `additionalProperties: false`/),
    ]);
  });

  it('lists unknown keywords, misplaced keywords, type arrays, bad oneOf and bad literals in one error', () => {
    const spec = {
      a: { type: 'string', pattern: '^x' },
      b: { type: 'string', items: { type: 'string' } },
      c: { type: ['string', 'null'] },
      d: { oneOf: [{ type: 'string' }] },
      e: { type: 'string', oneOf: [{ type: 'string' }, { type: 'null' }] },
      f: { type: 'integer', enum: [1, 1.5] },
      g: { type: 'boolean', const: 'yes' },
      h: { type: 'array', items: { type: 'object', additionalProperties: false, properties: { x: { type: 'number', minimum: 0 } } } },
      i: { type: 'json', default: undefined },
      j: { type: 'string', examples: [NaN] },
      k: { type: 'string', required: false },
      l: { type: 'json', $ref: '#/x' },
    } as unknown as ParameterSchemaSpec;
    let error: unknown;
    try {
      compileParameterSpec(spec);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SchemaError);
    const { violations, message } = error as SchemaError;
    expect(violations).toEqual([
      expect.stringMatching(/^parameters\.a: `pattern` is not supported/),
      expect.stringMatching(/^parameters\.b: `items` does not belong on a string node/),
      expect.stringMatching(/^parameters\.c: `type` arrays are not supported: use oneOf/),
      expect.stringMatching(/^parameters\.d: `oneOf` needs an array of at least two schemas/),
      expect.stringMatching(/^parameters\.e: `oneOf` cannot sit beside `type`/),
      expect.stringMatching(/^parameters\.f: `enum\[1\]` is 1\.5, which is not of type integer/),
      expect.stringMatching(/^parameters\.g: `const` is "yes", which is not of type boolean/),
      expect.stringMatching(/^parameters\.h\.items\.properties\.x: `minimum` is not supported/),
      expect.stringMatching(/^parameters\.i: `default` must be lossless JSON/),
      expect.stringMatching(/^parameters\.j: `examples` must be an array of lossless JSON values/),
      expect.stringMatching(/^parameters\.k: `required` must be `true` or left out/),
      expect.stringMatching(/^parameters\.l: `\$ref` is not supported/),
    ]);
    expect(message).toMatch(/^unsupported schema \(12 violations\): parameters\.a: /);
  });

  it('refuses `required` outside a property entry', () => {
    expect(violationsOf(() => compileValueSpec({ type: 'string', required: true } as never))).toEqual([
      expect.stringMatching(/^schema: `required` belongs on a property entry/),
    ]);
    expect(
      violationsOf(() => compileValueSpec({ type: 'array', items: { type: 'string', required: true } } as never)),
    ).toEqual([expect.stringMatching(/^schema\.items: `required` belongs on a property entry/)]);
  });

  it('refuses a node without type or oneOf, and an unknown type', () => {
    expect(violationsOf(() => compileValueSpec({ description: 'x' } as never))).toEqual([
      expect.stringMatching(/^schema: needs a `type`/),
    ]);
    expect(violationsOf(() => compileValueSpec({ type: 'date' } as never))).toEqual([
      expect.stringMatching(/^schema: `type` "date" is not supported/),
    ]);
  });

  it('refuses non-string description/title and non-object specs', () => {
    expect(violationsOf(() => compileParameterSpec({ a: { type: 'string', description: 5 } } as never))).toEqual([
      'parameters.a: `description` must be a string',
    ]);
    expect(violationsOf(() => compileParameterSpec({ a: 'string' } as never))).toEqual([
      expect.stringMatching(/^parameters\.a: must be a schema object/),
    ]);
    expect(violationsOf(() => compileParameterSpec([] as never))).toEqual([expect.stringMatching(/^parameters: must be a property map/)]);
  });

  it('turns a throwing getter in a spec into a violation', () => {
    const spec = {
      a: {
        get type(): never {
          throw new Error('boom');
        },
      },
    };
    expect(violationsOf(() => compileParameterSpec(spec as never))).toEqual([
      expect.stringMatching(/^parameters\.a: could not be read/),
    ]);
  });
});

describe('cycles and sharing', () => {
  it('refuses a cyclic schema', () => {
    const items: { type: 'array'; items?: unknown } = { type: 'array' };
    items.items = items;
    expect(violationsOf(() => compileValueSpec(items as never))).toEqual([expect.stringMatching(/^schema\.items: is a cycle/)]);

    const viaProperties: Record<string, unknown> = { type: 'object', additionalProperties: false };
    viaProperties.properties = { self: viaProperties };
    expect(violationsOf(() => compileParameterSpec({ root: viaProperties } as never))).toEqual([
      expect.stringMatching(/^parameters\.root\.properties\.self: is a cycle/),
    ]);
  });

  it('accepts one spec object reused in sibling places', () => {
    const text = { type: 'string' } as const;
    const node = compileValueSpec({
      type: 'object',
      additionalProperties: false,
      properties: { a: text, b: text, list: { type: 'array', items: text } },
    });
    expect(node.properties).toStrictEqual({ a: { type: 'string' }, b: { type: 'string' }, list: { type: 'array', items: { type: 'string' } } });
  });
});

describe('5,000-deep schemas', () => {
  it('compile, pass the subset check and validate without a stack overflow', () => {
    const node = compileValueSpec(deepSpec(5_000));
    expect(checkSchemaSubset(node)).toEqual([]);
    const validator = createValidator(node);
    let good: unknown = 'leaf';
    let bad: unknown = 7;
    for (let i = 0; i < 5_000; i++) {
      good = [good];
      bad = [bad];
    }
    expect(validator.validate(good, 'value')).toEqual([]);
    expect(validator.validate(bad, 'value')).toEqual([`value${'[0]'.repeat(5_000)}: must be string (got integer)`]);
  });

  it('deep nesting through properties and oneOf works too', () => {
    let spec: ValueSchemaSpec = { type: 'integer' };
    for (let i = 0; i < 5_000; i++) {
      spec =
        i % 2 === 0
          ? { type: 'object', additionalProperties: false, properties: { next: { ...spec, required: true } as never } }
          : { oneOf: [spec, { type: 'null' }] };
    }
    const validator = createValidator(compileValueSpec(spec));
    expect(validator.engine).toBe('iterative');
    let value: unknown = 1;
    for (let i = 0; i < 5_000; i++) value = i % 2 === 0 ? { next: value } : value;
    expect(validator.validate(value, 'value')).toEqual([]);
  });
});
