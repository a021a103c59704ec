/**
 * A data folder on a full disk (a small tmpfs mounted by the test: the test
 * machine runs as root): the run that lost its events says so, new runs get
 * 503 STORAGE_UNAVAILABLE at once and never grow the heap, /readyz fails,
 * and freeing space brings the service back without a restart.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post, startServer, type Running } from '../services/helpers.ts';

const MiB = 1024 * 1024;
const isRoot = process.getuid?.() === 0;
if (!isRoot) console.warn('full-disk.test.ts: not root, so no tmpfs can be mounted; the injected-ENOSPC cases in test/src/jsonl-sink-bounds.test.ts cover the sink');

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const retained = () => {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};

describe.runIf(isRoot)('a full disk under the data folder', () => {
  let base: string;
  let mount: string;
  let r: Running;
  beforeAll(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'ptc-full-disk-'));
    mount = path.join(base, 'data');
    await mkdir(mount);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mount]);
    r = await startServer({ dataDir: mount, workspace: path.join(base, 'workspace') });
    await mkdir(r.config.workspace, { recursive: true });
    // Each read returns about 640 KB: ten of them store a run's 4 MiB of events.
    await writeFile(path.join(r.config.workspace, 'big.txt'), `${'r'.repeat(999)}\n`.repeat(640));
  }, 60_000);
  afterAll(async () => {
    await r?.server.close();
    if (mount !== undefined) execFileSync('umount', ['-l', mount]);
    if (base !== undefined) await rm(base, { recursive: true, force: true });
  });

  it('says which run lost its events, refuses new runs with 503 without growing the heap, and recovers once space is freed', { timeout: 120_000 }, async () => {
    const code = "for (let i = 0; i < 10; i++) await tools.read({ file_path: 'big.txt' }); return 'done';";
    // Most of the disk is taken by a filler file, freed at the end.
    await writeFile(path.join(mount, 'filler'), Buffer.alloc(8 * MiB));
    let lost: { status: number; body: Record<string, unknown> } | undefined;
    for (let i = 0; i < 10 && lost === undefined; i++) {
      const response = await post(`${r.url}/v1/run`, { code, sessionId: `fill${i}` });
      const body = (await json(response)) as Record<string, unknown>;
      expect(response.status).toBe(200);
      if (body.eventsLost !== undefined) lost = { status: response.status, body };
    }
    // The run itself answered, and does not claim events the log lacks.
    expect(lost?.body).toMatchObject({ isError: false, value: { result: 'done' }, eventsLost: { code: 'EVENT_LOG_FAILED', reason: 'ENOSPC' } });

    const before = retained();
    const statuses = new Map<number, number>();
    for (let i = 0; i < 200; i++) {
      const response = await post(`${r.url}/v1/run`, { code, sessionId: `full${i % 5}` });
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (i === 0) expect(await json(response)).toMatchObject({ code: 'STORAGE_UNAVAILABLE', message: expect.stringMatching(/session logs cannot be written \(ENOSPC\)/) });
      else await response.arrayBuffer();
    }
    // The probe runs at most once a second and fails on the full disk: every new run is refused.
    expect(statuses).toEqual(new Map([[503, 200]]));
    expect(retained() - before).toBeLessThan(32 * MiB);
    expect((await fetch(`${r.url}/readyz`)).status).toBe(503);

    await rm(path.join(mount, 'filler'));
    await expect.poll(async () => (await fetch(`${r.url}/readyz`)).status, { timeout: 30_000 }).toBe(200);
    const again = await post(`${r.url}/v1/run`, { code: "return 'back'", sessionId: 'after' });
    expect(again.status).toBe(200);
    const body = (await json(again)) as Record<string, unknown>;
    expect(body.eventsLost).toBeUndefined();
    expect(body.value).toEqual({ logs: [], result: 'back' });
  });
});
