import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../services/config.ts';
import { json, post, startServer, tempDir, type Running } from '../services/helpers.ts';
import { HOSTILE_TYPES } from './typecheck-hostile.ts';

let running: Running | undefined;
afterEach(async () => {
  await running?.server.close();
  running = undefined;
});

it('/healthz answers while a program that explodes the checker is being checked; the run fails typecheck and the next is checked', async () => {
  // A heap the hostile check never fills (about 600 MB left alone): its time budget is what ends it, on
  // a fast machine too (with the default 512 MiB it sometimes ran out of memory first). The budget is
  // well under the check's own time: about 2.5 s on a fast machine of this kind, in a warm checker.
  running = await startServer({ typecheck: 'enforce', typechecker: { threads: 1, timeoutMs: 1_000, heapMiB: 2_048 } });
  const { url, server } = running;
  // A first run waits for the checker thread to load TypeScript, so the hostile check below runs in it.
  const clean = await json(post(`${url}/v1/run`, { code: 'return 1 + 1;' }));
  expect(clean).toMatchObject({ isError: false, value: { result: 2 } });

  let entered!: () => void;
  const executing = new Promise<void>((resolve) => (entered = resolve));
  server.core.registry.hook('tools/execute', (exec, next) => {
    if (exec.name === 'run_code') entered();
    return next();
  });
  const order: string[] = [];
  const hostile = json(post(`${url}/v1/run`, { code: `await tools.glob({ pattern: '*' });\n${HOSTILE_TYPES}`, timeoutMs: 20_000 })).then((body) => {
    order.push('hostile run answered');
    return body;
  });
  // run_code is executing: on the event loop, the check would start before any other request is read.
  await executing;
  const health = await fetch(`${url}/healthz`);
  order.push(`healthz ${health.status}`);
  const body = await hostile;
  expect(order).toEqual(['healthz 200', 'hostile run answered']);
  expect(body.isError).toBe(true);
  expect(body.error.message).toMatch(/^code run failed \(typecheck\): the program could not be type-checked, so nothing ran: the type-check did not finish within its 1000 ms budget/);
  expect(body.stats.calls).toBe(0);

  const misspelt = await json(post(`${url}/v1/run`, { code: "return await tools.glbo({ pattern: '*' });" }));
  expect(misspelt.error.message).toMatch(/^code run failed \(typecheck\): 1 type error; nothing ran/);
  expect(await json(post(`${url}/v1/run`, { code: 'return 3;' }))).toMatchObject({ isError: false, value: { result: 3 } });
}, 90_000);

it('the typechecker settings come from the config file, each bounded', async () => {
  const cwd = await tempDir();
  const file = path.join(cwd, 'ptc.config.json');
  await writeFile(file, JSON.stringify({ typecheck: 'enforce', typechecker: { threads: 2, heapMiB: 256, timeoutMs: 5_000 } }));
  expect(loadConfig({ cwd, env: {} })).toMatchObject({ typecheck: 'enforce', typechecker: { threads: 2, heapMiB: 256, timeoutMs: 5_000 } });
  await writeFile(file, JSON.stringify({}));
  expect(loadConfig({ cwd, env: {} }).typechecker).toEqual({});
  await writeFile(file, JSON.stringify({ typechecker: { heapMiB: 8, threads: 0, workers: 2 } }));
  const refused = (() => {
    try {
      loadConfig({ cwd, env: {} });
    } catch (error) {
      return error;
    }
  })();
  expect(refused).toBeInstanceOf(ConfigError);
  expect((refused as Error).message).toContain('typechecker.heapMiB must be >= 64');
  expect((refused as Error).message).toContain('typechecker.threads must be >= 1');
  expect((refused as Error).message).toContain('unknown key "workers" in typechecker');
});
