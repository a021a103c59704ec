/**
 * Hostile workspace-tool input through a real `ptc serve` child process: the
 * grep that crashed the process (7,000 nested groups), the grep and glob
 * patterns that froze its event loop (catastrophic backtracking, a deep
 * extglob), FIFOs that held libuv threads in open(), and absolute paths that
 * told the workspace's host location apart. Each runs via POST /v1/run while
 * /healthz is polled: the service stays up, /healthz answers while the
 * hostile run is still in flight, an ordinary run started alongside finishes
 * first, and the hostile call fails with a clear code.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverDirs, startCliServer, type CliServer, type ServerDirs } from './cli-server.ts';
import { HOST_LEAK } from './harness.ts';

interface RunBody {
  isError: boolean;
  value?: { result: unknown };
  error?: { message: string; info?: { code: string } };
}

let dirs: ServerDirs;
let server: CliServer;
beforeAll(async () => {
  dirs = await serverDirs();
  await mkdir(dirs.workspace, { recursive: true });
  await writeFile(path.join(dirs.workspace, 'h.txt'), 'x\n');
  await writeFile(path.join(dirs.workspace, 'stuck.txt'), `${'a'.repeat(34)}!\n`);
  await mkdir(path.join(dirs.workspace, 'names'));
  await writeFile(path.join(dirs.workspace, 'names', 'a'.repeat(100)), '');
  execFileSync('mkfifo', [path.join(dirs.workspace, 'pipe')]);
  server = await startCliServer(dirs, ['--runtime', 'in-process']);
}, 60_000);
afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
});

async function run(code: string, extra: object = {}): Promise<RunBody> {
  const response = await fetch(`${server.url}/v1/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code, ...extra }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as RunBody;
}

/**
 * Starts the hostile run, then an ordinary run, and polls /healthz until the
 * hostile run has answered. Returns what happened, in order.
 */
async function whilePolled(hostile: string, timeoutMs: number): Promise<{ body: RunBody; order: string[]; healthyDuring: number }> {
  const order: string[] = [];
  let done = false;
  const hostileRun = run(hostile, { timeoutMs }).then((body) => {
    done = true;
    order.push('hostile run answered');
    return body;
  });
  const ordinary = run("return (await tools.grep({ pattern: '^x$', path: 'h.txt' })).matches.length;").then((body) => {
    expect(body).toMatchObject({ isError: false, value: { result: 1 } });
    if (!done) order.push('ordinary run answered');
  });
  let healthyDuring = 0;
  while (!done) {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    if (!done) {
      healthyDuring++;
      if (healthyDuring === 1) order.push('healthz answered');
    }
    await delay(25); // pacing, not synchronisation: the loop ends on the run's answer
  }
  await ordinary;
  return { body: await hostileRun, order, healthyDuring };
}

async function expectServing(): Promise<void> {
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  expect(await run("return (await tools.glob({ pattern: '*.txt' })).paths;")).toMatchObject({ isError: false, value: { result: ['h.txt', 'stuck.txt'] } });
  expect(server.child.exitCode).toBeNull();
}

describe('hostile tool input against a real service', () => {
  it('the grep that aborted the process (7,000 nested groups) fails TOOL_FAILED; the service stays up', { timeout: 60_000 }, async () => {
    const body = await run(
      "await tools.write({ file_path: 'h.txt', content: 'x' });\n" +
        "try { await tools.grep({ pattern: '(a|'.repeat(7000) + 'a' + ')'.repeat(7000), path: 'h.txt' }); return 'no error'; }\n" +
        'catch (e) { return { code: (e as ToolCallError).code, message: (e as Error).message }; }',
    );
    expect(body.value?.result).toEqual({
      code: 'TOOL_FAILED',
      message: 'pattern is 28001 characters, over the 1000-character limit: use a shorter pattern (or several calls)',
    });
    // Nested braces through glob and grep's glob filter reach the same refusal.
    const braces = await run(
      "const deep = '{a,'.repeat(3000) + 'a' + '}'.repeat(3000);\n" +
        'const out = [];\n' +
        "for (const call of [() => tools.glob({ pattern: deep }), () => tools.grep({ pattern: 'x', glob: deep })]) {\n" +
        '  try { await call(); out.push(\'no error\'); } catch (e) { out.push((e as ToolCallError).code); }\n' +
        '}\nreturn out;',
    );
    expect(braces.value?.result).toEqual(['TOOL_FAILED', 'TOOL_FAILED']);
    await writeFile(path.join(dirs.workspace, 'h.txt'), 'x\n');
    await expectServing();
  });

  it('grep ^(a+)+\\1$ over 34 a and a ! (a backreference: V8 in a worker, not RE2): healthz answers and an ordinary run finishes while it runs; the run times out', { timeout: 60_000 }, async () => {
    const { body, order, healthyDuring } = await whilePolled("return await tools.grep({ pattern: '^(a+)+\\\\1$', path: 'stuck.txt' });", 3_000);
    expect(order).toEqual(['healthz answered', 'ordinary run answered', 'hostile run answered']);
    expect(healthyDuring).toBeGreaterThan(1);
    expect(body.isError).toBe(true);
    expect(body.error?.info?.code).toBe('CODE_RUN_FAILED');
    expect(body.error?.message).toMatch(/^code run failed \(timeout\)/);
    await expectServing();
  });

  it("glob '*a'×6+'*b' against a 100-character name (froze /healthz for 20 s): same; a 2,000-deep extglob is refused at once", { timeout: 60_000 }, async () => {
    const { body, order } = await whilePolled("return await tools.glob({ pattern: 'names/' + '*a'.repeat(6) + '*b' });", 3_000);
    expect(order).toEqual(['healthz answered', 'ordinary run answered', 'hostile run answered']);
    expect(body.error?.message).toMatch(/^code run failed \(timeout\)/);
    const extglob = await run(
      "try { await tools.glob({ pattern: '+('.repeat(2000) + 'a' + ')'.repeat(2000) }); return 'no error'; } catch (e) { return (e as ToolCallError).code; }",
    );
    expect(extglob.value?.result).toBe('TOOL_FAILED');
    await expectServing();
  });

  it('four parallel reads of a FIFO (blocked for 635 s) fail at once as not a regular file; session reads keep working', { timeout: 60_000 }, async () => {
    const body = await run(
      "const r = await Promise.allSettled([1, 2, 3, 4].map(() => tools.read({ file_path: 'pipe' })));\n" +
        "return r.map((x) => (x.status === 'rejected' ? `${(x.reason as ToolCallError).code}: ${(x.reason as Error).message}` : 'read'));",
      { sessionId: 'fifo' },
    );
    expect(body.value?.result).toEqual(
      Array(4).fill('TOOL_FAILED: "pipe" is a named pipe (FIFO), not a regular file: the workspace tools only use regular files and directories'),
    );
    const events = await fetch(`${server.url}/v1/sessions/fifo/events`);
    expect(events.status).toBe(200);
    await expectServing();
  });

  it('absolute paths get one answer whether inside the workspace or not (no oracle for its host location)', { timeout: 60_000 }, async () => {
    const inside = path.join(dirs.workspace, 'h.txt');
    const probes = [inside, path.join(dirs.workspace, 'missing.txt'), '/etc/passwd', '/nonexistent/h.txt'];
    const body = await run(
      `const out = [];\nfor (const p of ${JSON.stringify(probes)}) {\n` +
        "  try { await tools.read({ file_path: p }); out.push('read'); } catch (e) { out.push((e as Error).message.replace(p, '<p>')); }\n" +
        '}\nreturn out;',
    );
    expect(body.value?.result).toEqual(Array(4).fill('"<p>" is an absolute path: pass a path relative to the workspace root, such as "src/index.ts"'));
    expect(JSON.stringify(body).replaceAll(dirs.workspace, '')).not.toMatch(HOST_LEAK);
  });
});
