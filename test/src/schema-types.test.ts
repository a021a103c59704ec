/**
 * Static inference. These assertions are checked by `tsc --noEmit`
 * (part of `npm test`); at run time they only prove the file loads.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { FrozenJson, JsonValue } from '../../src/json.ts';
import type { InferArgs, InferValue, ParameterSchemaSpec, ValueSchemaSpec } from '../../src/schema/types.ts';

/** What defineTool's `const` type parameters see: the literal type of a spec. */
function spec<const S extends ValueSchemaSpec>(s: S): S {
  return s;
}
function params<const P extends ParameterSchemaSpec>(p: P): P {
  return p;
}

describe('InferValue', () => {
  it('infers scalars', () => {
    expectTypeOf<InferValue<{ type: 'string' }>>().toEqualTypeOf<string>();
    expectTypeOf<InferValue<{ type: 'number' }>>().toEqualTypeOf<number>();
    expectTypeOf<InferValue<{ type: 'integer' }>>().toEqualTypeOf<number>();
    expectTypeOf<InferValue<{ type: 'boolean' }>>().toEqualTypeOf<boolean>();
    expectTypeOf<InferValue<{ type: 'null' }>>().toEqualTypeOf<null>();
    expectTypeOf<InferValue<{ type: 'json' }>>().toEqualTypeOf<JsonValue>();
  });

  it('infers literals from enum and const', () => {
    const mode = spec({ type: 'string', enum: ['read', 'write'] });
    expectTypeOf<InferValue<typeof mode>>().toEqualTypeOf<'read' | 'write'>();
    const two = spec({ type: 'integer', const: 2 });
    expectTypeOf<InferValue<typeof two>>().toEqualTypeOf<2>();
    const yes = spec({ type: 'boolean', const: true });
    expectTypeOf<InferValue<typeof yes>>().toEqualTypeOf<true>();
  });

  it('infers arrays, with and without items', () => {
    const list = spec({ type: 'array', items: { type: 'string' } });
    expectTypeOf<InferValue<typeof list>>().toEqualTypeOf<string[]>();
    expectTypeOf<InferValue<{ type: 'array' }>>().toEqualTypeOf<JsonValue[]>();
  });

  it('infers objects with required and optional keys', () => {
    const read = spec({
      type: 'object',
      additionalProperties: false,
      properties: {
        path: { type: 'string', required: true },
        offset: { type: 'integer' },
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
    expectTypeOf<InferValue<typeof read>>().toEqualTypeOf<{
      path: string;
      offset?: number;
      lines: { number: number; text: string }[];
    }>();
  });

  it('infers an open object as its known keys plus JSON extras', () => {
    const open = spec({ type: 'object', additionalProperties: true, properties: { id: { type: 'string', required: true } } });
    type Open = InferValue<typeof open>;
    expectTypeOf<Open['id']>().toEqualTypeOf<string>();
    expectTypeOf<Open['other']>().toEqualTypeOf<JsonValue | undefined>();
    expectTypeOf<InferValue<{ type: 'object'; additionalProperties: true }>>().toEqualTypeOf<{ [key: string]: JsonValue }>();
  });

  it('infers unions from oneOf, including discriminated objects', () => {
    const maybe = spec({ oneOf: [{ type: 'string' }, { type: 'null' }] });
    expectTypeOf<InferValue<typeof maybe>>().toEqualTypeOf<string | null>();
    const job = spec({
      oneOf: [
        {
          type: 'object',
          additionalProperties: false,
          properties: { kind: { type: 'string', const: 'background', required: true }, jobId: { type: 'string', required: true } },
        },
        {
          type: 'object',
          additionalProperties: false,
          properties: { kind: { type: 'string', const: 'foreground', required: true }, exitCode: { type: 'integer', required: true } },
        },
      ],
    });
    expectTypeOf<InferValue<typeof job>>().toEqualTypeOf<
      { kind: 'background'; jobId: string } | { kind: 'foreground'; exitCode: number }
    >();
  });
});

describe('InferArgs', () => {
  it('infers required, optional and literal arguments', () => {
    const p = params({
      path: { type: 'string', required: true },
      mode: { type: 'string', enum: ['a', 'b'] },
      limit: { oneOf: [{ type: 'integer' }, { type: 'null' }], required: true },
    });
    expectTypeOf<InferArgs<typeof p>>().toEqualTypeOf<{ path: string; mode?: 'a' | 'b'; limit: number | null }>();
  });

  it('freezes deeply for what tools receive', () => {
    const p = params({ tags: { type: 'array', items: { type: 'string' }, required: true } });
    expectTypeOf<FrozenJson<InferArgs<typeof p>>>().toEqualTypeOf<{ readonly tags: ReadonlyArray<string> }>();
  });
});
