import { afterEach, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { createBench, valueOf, type Bench } from './harness.ts';
import { createTypingsService } from '../../typings/service.ts';

let bench: Bench;
afterEach(() => bench.close());

const hello = defineTool({
  name: 'hello',
  description: 'Says hello.',
  parameters: {},
  output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
  async execute() {
    return 'hello';
  },
});

it("mode 'code' refuses a direct call with UNKNOWN_TOOL telling the model to use run_code; nested calls work", async () => {
  bench = createBench({ mode: 'code' });
  bench.registry.register(hello);
  const direct = await bench.registry.dispatch({ name: 'hello', arguments: {} });
  expect(direct.isError && direct.error.info?.code).toBe('UNKNOWN_TOOL');
  expect(direct.isError && direct.error.message).toMatch(/only callable from a program: call run_code/);
  expect(valueOf(await bench.runCode('return await tools.hello({})')).result).toBe('hello');
});

it("mode 'both' allows direct calls too", async () => {
  bench = createBench({ mode: 'both', typings: createTypingsService() });
  bench.registry.register(hello);
  const direct = await bench.registry.dispatch({ name: 'hello', arguments: {} });
  expect(direct.isError ? direct.error.message : direct.value).toBe('hello');
  expect(await bench.codeMode.prompt()).toMatch(/run_code/);
});

it("mode 'native' allows direct calls and advertises nothing", async () => {
  bench = createBench({ mode: 'native', typings: createTypingsService() });
  bench.registry.register(hello);
  const direct = await bench.registry.dispatch({ name: 'hello', arguments: {} });
  expect(direct.isError).toBe(false);
  expect(await bench.codeMode.prompt()).toBe('');
});

it('close() removes the admission hook', async () => {
  bench = createBench({ mode: 'code' });
  bench.registry.register(hello);
  await bench.codeMode.close();
  const direct = await bench.registry.dispatch({ name: 'hello', arguments: {} });
  expect(direct.isError).toBe(false);
});

it('typings() and prompt() describe the tools except run_code; without a typings service they say what is missing', async () => {
  bench = createBench({ typings: createTypingsService() });
  bench.registry.register(hello);
  const typings = await bench.codeMode.typings();
  expect(typings).toMatch(/hello/);
  expect(typings).not.toMatch(/run_code/);
  expect(await bench.codeMode.prompt()).toMatch(/WebAssembly/);
  const bare = createBench();
  await expect(bare.codeMode.typings()).rejects.toThrow(/without a typings service/);
  await bare.close();
});
