/**
 * Fuzzing the host's JSON boundary: snapshotJson throws only LossyJsonError
 * and otherwise returns exactly a JSON round trip; isLosslessJson never throws
 * and agrees with it; validators from createValidator never throw on any
 * value and return string violations. Fixed seeds, bounded runs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LossyJsonError, isLosslessJson, snapshotJson } from '../../../src/json.ts';
import { createValidator } from '../../../src/schema/validate.ts';
import type { JsonSchemaNode } from '../../../src/schema/types.ts';
import { hostile } from './hostile-values.ts';

const SEED = 20261130;

describe('snapshotJson and isLosslessJson', () => {
  it('throw nothing but LossyJsonError, and agree', () => {
    fc.assert(
      fc.property(hostile, (recipe) => {
        const value = recipe.build();
        let snapshot: unknown;
        let threw: unknown;
        try {
          snapshot = snapshotJson(value);
        } catch (error) {
          threw = error;
        }
        const lossless = isLosslessJson(value);
        if (threw !== undefined) {
          expect(threw).toBeInstanceOf(LossyJsonError);
          expect((threw as LossyJsonError).violation.path).toMatch(/^value/);
          expect(lossless).toBe(false);
        } else {
          expect(lossless).toBe(true);
          expect(JSON.stringify(snapshot)).toBe(JSON.stringify(value));
          if (typeof value === 'object' && value !== null) expect(snapshot).not.toBe(value);
        }
      }),
      { seed: SEED, numRuns: 600 },
    );
  });

  it('a lossless value snapshots to itself', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        // fc.jsonValue may produce -0, which is not lossless by design.
        fc.pre(!Object.is(value, -0) && !JSON.stringify(value).includes('-0'));
        expect(snapshotJson(value)).toEqual(value);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });
});

/** Schemas inside the raw subset. */
const schemaArb: fc.Arbitrary<JsonSchemaNode> = fc.letrec<{ schema: JsonSchemaNode }>((tie) => ({
  schema: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom<JsonSchemaNode>(
      { type: 'string' },
      { type: 'number' },
      { type: 'integer' },
      { type: 'boolean' },
      { type: 'null' },
      { type: 'string', enum: ['a', 'b'] },
      { type: 'integer', const: 3 },
      {},
    ),
    tie('schema').map((items): JsonSchemaNode => ({ type: 'array', items })),
    fc
      .tuple(fc.dictionary(fc.constantFrom('a', 'b', '__proto__', 'constructor', 'x-y'), tie('schema'), { maxKeys: 3 }), fc.boolean(), fc.boolean())
      .map(([properties, additional, requireAll]): JsonSchemaNode => {
        const keys = Object.keys(properties);
        return { type: 'object', properties, additionalProperties: additional, ...(requireAll && keys.length > 0 ? { required: keys } : {}) };
      }),
    fc.tuple(tie('schema'), tie('schema')).map(([a, b]): JsonSchemaNode => ({ oneOf: [a, b] })),
  ),
})).schema;

describe('validators from createValidator', () => {
  it('never throw on any value and return string violations', () => {
    fc.assert(
      fc.property(schemaArb, fc.array(hostile, { minLength: 1, maxLength: 8 }), (schema, recipes) => {
        const values = recipes.map((r) => r.build());
        let validator;
        try {
          validator = createValidator(schema);
        } catch (error) {
          // Only a schema outside the subset may be refused, and only as a SchemaError.
          expect((error as Error).name).toBe('SchemaError');
          return;
        }
        for (const value of values) {
          const violations = validator.validate(value, 'arguments');
          expect(Array.isArray(violations)).toBe(true);
          for (const v of violations) {
            expect(typeof v).toBe('string');
            expect(v.startsWith('arguments')).toBe(true);
          }
        }
      }),
      { seed: SEED, numRuns: 250 },
    );
  });

  it('accept what a lossless value matches: validating a snapshot agrees with validating the original', () => {
    fc.assert(
      fc.property(schemaArb, hostile, (schema, recipe) => {
        const value = recipe.build();
        let validator;
        try {
          validator = createValidator(schema);
        } catch {
          return;
        }
        if (!isLosslessJson(value)) return;
        expect(validator.validate(snapshotJson(value), 'v')).toEqual(validator.validate(value, 'v'));
      }),
      { seed: SEED, numRuns: 200 },
    );
  });
});
