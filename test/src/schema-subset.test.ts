import { describe, expect, it } from 'vitest';
import { SchemaError } from '../../src/schema/schema-error.ts';
import { checkSchemaSubset, normalizeRawSchema } from '../../src/schema/subset.ts';

describe('checkSchemaSubset (raw schemas)', () => {
  it('accepts everything the subset allows', () => {
    const schema = {
      type: 'object',
      title: 'T',
      description: 'D',
      properties: {
        kind: { type: 'string', enum: ['a', 'b'], default: 'a', examples: ['b'] },
        n: { type: 'integer', const: 2 },
        list: { type: 'array', items: { oneOf: [{ type: 'null' }, { type: 'boolean' }] } },
        any: {},
        literal: { enum: [1, 'x', null, { a: [1] }] },
      },
      required: ['kind'],
      additionalProperties: false,
    };
    expect(checkSchemaSubset(schema)).toEqual([]);
  });

  it('lists every violation with its path', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: ['string', 'null'] },
        b: { $ref: '#/definitions/b' },
        c: { type: 'string', pattern: '^x', format: 'uri' },
        d: { anyOf: [{ type: 'string' }] },
        e: { type: 'object', additionalProperties: { type: 'string' } },
        f: { type: 'array', items: [{ type: 'string' }] },
        g: { oneOf: [{ type: 'string' }] },
        h: { type: 'string', oneOf: [{ type: 'string' }, { type: 'null' }] },
        i: { type: 'integer', enum: [1.5] },
        j: { type: 'string', properties: {} },
        k: 'string',
      },
      required: 'k',
      minProperties: 1,
    };
    expect(checkSchemaSubset(schema, { root: 'output.schema' })).toEqual([
      expect.stringMatching(/^output\.schema: `required` must be an array of property names/),
      expect.stringMatching(/^output\.schema: `minProperties` is not supported/),
      expect.stringMatching(/^output\.schema\.properties\.a: `type` arrays are not supported/),
      expect.stringMatching(/^output\.schema\.properties\.b: `\$ref` is not supported/),
      expect.stringMatching(/^output\.schema\.properties\.c: `pattern` is not supported/),
      expect.stringMatching(/^output\.schema\.properties\.c: `format` is not supported/),
      expect.stringMatching(/^output\.schema\.properties\.d: `anyOf` is not supported/),
      expect.stringMatching(/^output\.schema\.properties\.e: `additionalProperties` must be true or false/),
      expect.stringMatching(/^output\.schema\.properties\.f: `items` must be one schema/),
      expect.stringMatching(/^output\.schema\.properties\.g: `oneOf` needs an array of at least two schemas/),
      expect.stringMatching(/^output\.schema\.properties\.h: `oneOf` cannot sit beside `type`/),
      expect.stringMatching(/^output\.schema\.properties\.i: `enum\[0\]` is 1\.5, which is not of type integer/),
      expect.stringMatching(/^output\.schema\.properties\.j: `properties` only applies to \{"type": "object"\} nodes/),
      expect.stringMatching(/^output\.schema\.properties\.k: must be a schema object/),
    ]);
  });

  it('refuses non-lossless annotations and literals', () => {
    expect(checkSchemaSubset({ type: 'number', default: NaN, const: -0 })).toEqual([
      expect.stringMatching(/^schema: `default` must be lossless JSON/),
      'schema: `const` must be lossless JSON',
    ]);
  });

  it('refuses a cyclic schema and accepts sibling reuse', () => {
    const node: Record<string, unknown> = { type: 'array' };
    node.items = node;
    expect(checkSchemaSubset(node)).toEqual([expect.stringMatching(/^schema\.items: is a cycle/)]);
    const shared = { type: 'string' };
    expect(checkSchemaSubset({ type: 'object', properties: { a: shared, b: shared } })).toEqual([]);
  });

  it('refuses root decorations unless allowed, and refuses them below the root always', () => {
    const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: 'x', $comment: 'c', type: 'object', properties: { a: { $comment: 'no' } } };
    expect(checkSchemaSubset(schema)).toHaveLength(4);
    expect(checkSchemaSubset(schema, { allowRootDecorations: true })).toEqual([
      expect.stringMatching(/^schema\.properties\.a: `\$comment` is not supported/),
    ]);
  });

  it('checks a 5,000-deep schema without a stack overflow', () => {
    let node: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 5_000; i++) node = { type: 'array', items: node };
    expect(checkSchemaSubset(node)).toEqual([]);
  });

  it('never throws on hostile input', () => {
    const hostile = {
      type: 'object',
      get properties(): never {
        throw new Error('boom');
      },
    };
    expect(checkSchemaSubset(hostile)).toEqual([expect.stringMatching(/^schema: could not be read/)]);
    for (const value of [null, undefined, 5, 'x', [], () => 1, Symbol('s'), new Date()]) {
      expect(checkSchemaSubset(value)).toEqual([expect.stringMatching(/^schema: must be a schema object/)]);
    }
  });
});

describe('normalizeRawSchema', () => {
  it('returns a detached, frozen copy without the root decorations', () => {
    const raw = { $schema: 'x', $id: 'y', $comment: 'z', type: 'object', properties: { a: { type: 'string' } } };
    const normal = normalizeRawSchema(raw);
    expect(normal).toStrictEqual({ type: 'object', properties: { a: { type: 'string' } } });
    expect(Object.isFrozen(normal) && Object.isFrozen(normal.properties!.a)).toBe(true);
    expect(normal.properties).not.toBe(raw.properties);
    expect(raw.$schema).toBe('x');
  });

  it('throws one SchemaError with every violation', () => {
    let error: unknown;
    try {
      normalizeRawSchema({ type: 'string', minLength: 1, maxLength: 3 });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SchemaError);
    expect((error as SchemaError).violations).toHaveLength(2);
  });

  it('keeps a property named __proto__', () => {
    const normal = normalizeRawSchema(JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}'));
    expect(Object.hasOwn(normal.properties!, '__proto__')).toBe(true);
  });
});
