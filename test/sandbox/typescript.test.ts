import { afterAll, expect, it } from 'vitest';
import { createFakeHost, failureOf, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('runs erasable TypeScript: interfaces, generics, as, satisfies', async () => {
  const outcome = await host.run(
    [
      'interface Row { id: number; name: string }',
      'type Pair<T> = [T, T];',
      'function twice<T>(value: T): Pair<T> { return [value, value]; }',
      'const row = { id: 1, name: "a" } satisfies Row;',
      'const rows = (await tools.rows({})) as readonly Row[];',
      'return { pair: twice<number>(row.id), names: rows.map((r: Row): string => r.name) };',
    ].join('\n'),
    { tools: { rows: () => [{ id: 1, name: 'x' }, { id: 2, name: 'y' }] } },
  );
  expect(resultOf(outcome)).toEqual({ pair: [1, 1], names: ['x', 'y'] });
});

it('an error thrown in a TypeScript program reports the model’s own line:col', async () => {
  const failure = failureOf(
    await host.run(['interface Row { id: number }', 'const rows: Row[] = [];', 'const first = rows[0] as Row;', 'return first.id;'].join('\n')),
  );
  expect(failure.kind).toBe('exception');
  expect(failure.message).toBe("TypeError: Cannot read properties of undefined (reading 'id') (agent.ts:4:14)");
  expect([failure.line, failure.column]).toEqual([4, 14]);
  expect(failure.frames).toEqual(['at agent.ts:4:14']);
});

it('a syntax error reports line:col in the model’s source', async () => {
  const failure = failureOf(await host.run('const a: number = 1;\nlet b = = 2;'));
  expect(failure.kind).toBe('syntax');
  expect([failure.line, failure.column]).toEqual([2, 9]);
  expect(failure.message).toMatch(/agent\.ts:2:9/);
});

it('a JavaScript-only syntax error V8 finds also carries line:col', async () => {
  const failure = failureOf(await host.run('const ok = 1;\nreturn ok +;'));
  expect(failure.kind).toBe('syntax');
  expect(failure.line).toBe(2);
});

it('enum is refused with a clear message and its position', async () => {
  const failure = failureOf(await host.run('const x = 1;\nenum Color { Red, Green }\nreturn Color.Red;'));
  expect(failure.kind).toBe('syntax');
  expect(failure.message).toMatch(/enum is not supported/);
  expect(failure.message).toMatch(/use a union of string literals or a plain object instead of an enum/);
  expect([failure.line, failure.column]).toEqual([2, 1]);
});

it('namespaces are refused too', async () => {
  const failure = failureOf(await host.run('namespace N { export const a = 1 }\nreturn N.a;'));
  expect(failure.kind).toBe('syntax');
  expect(failure.message).toMatch(/namespace/);
});
