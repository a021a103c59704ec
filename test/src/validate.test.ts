import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLosslessJson, LossyJsonError, snapshotJson } from '../../src/json.ts';
import { compileValueSpec } from '../../src/schema/compile.ts';
import { compileParameterSpec } from '../helpers/schema.ts';
import { anythingLossy } from '../security/fuzz/hostile-values.ts';
import { compileIterative } from '../../src/schema/iterative-validator.ts';
import { SchemaError } from '../../src/schema/schema-error.ts';
import type { JsonSchemaNode } from '../../src/schema/types.ts';
import { createValidator } from '../../src/schema/validate.ts';

const lines = compileValueSpec({
  type: 'object',
  additionalProperties: false,
  properties: {
    path: { type: 'string', required: true },
    lines: {
      type: 'array',
      required: true,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: { number: { type: 'integer', required: true }, text: { type: 'string', required: true } },
      },
    },
  },
});

describe('createValidator', () => {
  it('accepts a valid value with no violations', () => {
    expect(createValidator(lines).validate({ path: 'a', lines: [{ number: 1, text: 'x' }] }, 'value')).toEqual([]);
  });

  it('names the JSON path of each violation from the root, all errors at once', () => {
    const violations = createValidator(lines).validate(
      { path: 3, lines: [{ number: 1, text: 'ok' }, { number: 1.5 }, { number: 2, text: 'x', extra: true }] },
      'value',
    );
    expect(violations).toEqual([
      'value.path: must be string (got integer)',
      'value.lines[1].text: is required but missing',
      'value.lines[1].number: must be integer (got number)',
      'value.lines[2].extra: is not allowed (this object accepts no other keys)',
    ]);
  });

  it('uses the root it is given (arguments, nested keys)', () => {
    const params = compileParameterSpec({ a: { type: 'object', additionalProperties: true, properties: { b: { type: 'string' } } } });
    expect(createValidator(params).validate({ a: { b: false } }, 'arguments')).toEqual(['arguments.a.b: must be string (got boolean)']);
  });

  it('renders keys that need quoting or escaping in paths (spaces, ~, /, non-ASCII)', () => {
    const v = createValidator({
      type: 'object',
      properties: {
        'x y': {
          type: 'object',
          properties: { '~/': { oneOf: [{ type: 'string' }, { type: 'string' }] } },
          required: ['é%'],
          additionalProperties: true,
        },
      },
    });
    expect(v.engine).toBe('ajv');
    expect(v.validate({ 'x y': { '~/': 's' } }, 'value')).toEqual([
      'value["x y"]["é%"]: is required but missing',
      'value["x y"]["~/"]: must match exactly one of its 2 oneOf branches, but matches 2 (branches 0, 1)',
    ]);
  });

  it('checks enum and const literals', () => {
    const v = createValidator(compileValueSpec({ type: 'string', enum: ['read', 'write'] }));
    expect(v.validate('read', 'value')).toEqual([]);
    expect(v.validate('delete', 'value')).toEqual(['value: must be one of "read", "write"']);
    const c = createValidator(compileValueSpec({ type: 'object', additionalProperties: true, properties: { kind: { type: 'string', const: 'hover', required: true } } }));
    expect(c.validate({ kind: 'locations' }, 'value')).toEqual(['value.kind: must be exactly "hover"']);
  });

  it('treats a required key holding undefined as missing', () => {
    const v = createValidator(compileParameterSpec({ a: { type: 'string', required: true }, b: { type: 'string' } }));
    expect(v.validate({ a: undefined }, 'arguments')).toEqual(['arguments.a: is required but missing']);
    expect(v.validate({ a: 'x', b: undefined }, 'arguments')).toEqual([]);
  });

  it('does not count NaN or Infinity as numbers', () => {
    const v = createValidator(compileValueSpec({ type: 'number' }));
    expect(v.validate(NaN, 'value')).toEqual(['value: must be number (got NaN)']);
    expect(v.validate(Infinity, 'value')).toEqual(['value: must be number (got Infinity)']);
  });

  it('never mutates or coerces the value (no defaults, no coercion, no removal)', () => {
    const v = createValidator({
      type: 'object',
      properties: { n: { type: 'number', default: 1 }, s: { type: 'string' } },
      additionalProperties: false,
    });
    const value = { s: 5, extra: 1 };
    expect(v.validate(value, 'value')).toHaveLength(2);
    expect(value).toStrictEqual({ s: 5, extra: 1 });
  });

  it('refuses a schema outside the subset, tolerating root decorations', () => {
    expect(() => createValidator({ type: 'string', pattern: 'x' } as JsonSchemaNode)).toThrow(SchemaError);
    const v = createValidator({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'string' } as JsonSchemaNode);
    expect(v.validate('x', 'value')).toEqual([]);
  });
});

describe('exactly-one oneOf', () => {
  const overlap = createValidator(compileValueSpec({ oneOf: [{ type: 'number' }, { type: 'integer' }, { type: 'string' }] }));

  it('passes a value matching exactly one branch', () => {
    expect(overlap.validate(1.5, 'value')).toEqual([]);
    expect(overlap.validate('x', 'value')).toEqual([]);
  });

  it('fails a value matching two branches and says how many matched', () => {
    expect(overlap.validate(2, 'value')).toEqual(['value: must match exactly one of its 3 oneOf branches, but matches 2 (branches 0, 1)']);
  });

  it('counts every matching branch, not just the first two', () => {
    const v = createValidator(compileValueSpec({ oneOf: [{ type: 'json' }, { type: 'number' }, { type: 'integer' }, { type: 'string' }] }));
    expect(v.validate(3, 'value')).toEqual(['value: must match exactly one of its 4 oneOf branches, but matches 3 (branches 0, 1, 2)']);
  });

  it('fails a value matching none, with each branch’s reasons', () => {
    expect(overlap.validate(null, 'value')).toEqual([
      'value: must be number (got null) (in oneOf branch 0)',
      'value: must be integer (got null) (in oneOf branch 1)',
      'value: must be string (got null) (in oneOf branch 2)',
      'value: must match exactly one of its 3 oneOf branches, but matches none',
    ]);
  });

  it('discriminates object branches by const', () => {
    const v = createValidator(
      compileValueSpec({
        oneOf: [
          { type: 'object', additionalProperties: false, properties: { kind: { type: 'string', const: 'background', required: true }, jobId: { type: 'string', required: true } } },
          { type: 'object', additionalProperties: true, properties: { kind: { type: 'string', const: 'foreground', required: true } } },
        ],
      }),
    );
    expect(v.validate({ kind: 'background', jobId: 'j1' }, 'value')).toEqual([]);
    expect(v.validate({ kind: 'foreground', exitCode: 0 }, 'value')).toEqual([]);
    expect(v.validate({ kind: 'background' }, 'value')).toContain(
      'value: must match exactly one of its 2 oneOf branches, but matches none',
    );
  });
});

describe('hostile input never throws', () => {
  const v = createValidator(lines);

  it('turns a throwing getter into a violation at its path', () => {
    const hostile = {
      path: 'a',
      lines: [
        {
          number: 1,
          get text(): never {
            throw new Error('boom');
          },
        },
      ],
    };
    const violations = v.validate(hostile, 'value');
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(/^value\.lines\[0\]\.text: could not be read/);
    expect(violations[0]).not.toContain('boom');
  });

  it('turns throwing proxies into a violation', () => {
    const proxy = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        ownKeys() {
          throw new Error('trap');
        },
      },
    );
    expect(v.validate(proxy, 'value')).toEqual([expect.stringMatching(/^value: could not be read/)]);
    const { proxy: revoked, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(v.validate({ path: 'a', lines: [revoked] }, 'value')).toEqual([expect.stringMatching(/^value\.lines\[0\]: could not be read/)]);
  });

  it('fast-check: arbitrary values through snapshot, check and validator never throw anything unexpected', () => {
    const validators = [v, createValidator(compileValueSpec({ type: 'json' })), createValidator(compileValueSpec({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'json' } }] }))];
    const hostile = fc.oneof(
      anythingLossy(),
      fc.constant(
        new Proxy({}, {
          get() {
            throw new Error('x');
          },
        }),
      ),
      fc.constant({
        get a(): never {
          throw new Error('x');
        },
      }),
      fc.func(fc.integer()),
    );
    fc.assert(
      fc.property(hostile, fc.boolean(), (value, wrap) => {
        const input = wrap ? { path: 'p', lines: [value] } : value;
        try {
          snapshotJson(input);
        } catch (error) {
          expect(error).toBeInstanceOf(LossyJsonError);
        }
        expect(typeof isLosslessJson(input)).toBe('boolean');
        for (const validator of validators) {
          const violations = validator.validate(input, 'value');
          expect(Array.isArray(violations)).toBe(true);
          for (const violation of violations) expect(violation).toMatch(/^value/);
        }
      }),
      { numRuns: 300, seed: 0x5eed },
    );
  });
});

describe('the two engines agree (ajv and the iterative one for deep schemas)', () => {
  // Random subset schemas, and values drawn to hit them often.
  const schemaArb: fc.Arbitrary<JsonSchemaNode> = fc.letrec<{ node: JsonSchemaNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom<JsonSchemaNode>({ type: 'string' }, { type: 'number' }, { type: 'integer' }, { type: 'boolean' }, { type: 'null' }, {}),
      fc.constantFrom<JsonSchemaNode>({ type: 'string', enum: ['a', 'b'] }, { type: 'integer', const: 1 }, { enum: [null, 1, 'a', [1], { a: 1 }] }),
      fc.record({ type: fc.constant('array' as const), items: tie('node') }),
      fc
        .record({
          props: fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('node'), { maxKeys: 3 }),
          required: fc.subarray(['a', 'b']),
          closed: fc.boolean(),
        })
        .map(({ props, required, closed }): JsonSchemaNode => ({ type: 'object', properties: props, required, additionalProperties: !closed })),
      fc.array(tie('node'), { minLength: 2, maxLength: 3 }).map((oneOf): JsonSchemaNode => ({ oneOf })),
    ),
  })).node;
  const valueArb = fc.letrec<{ v: unknown }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom(null, true, 1, 1.5, 'a', 'b', 'z'),
      fc.array(tie('v'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), tie('v'), { maxKeys: 4 }),
    ),
  })).v.map((value) => snapshotJson(value)); // validators see snapshots: plain objects only

  it('same violations for random schemas and values', () => {
    fc.assert(
      fc.property(schemaArb, valueArb, (schema, value) => {
        const ajv = createValidator(schema);
        expect(ajv.engine).toBe('ajv');
        const iterative = compileIterative(schema);
        expect([...ajv.validate(value, 'value')].sort()).toEqual([...iterative(value, 'value')].sort());
      }),
      { numRuns: 300, seed: 0x5eed },
    );
  });
});
