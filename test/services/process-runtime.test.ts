import { describe, expect, it } from 'vitest';
import { json, post, readSse, startServer } from './helpers.ts';

describe('process runtime', () => {
  it('serves runs from the child-process pool and reports it', async () => {
    const { url, server } = await startServer({ runtime: 'process' });
    try {
      await server.core.runtime.ready();
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      const body = await json(post(`${url}/v1/run`, { code: `console.log('in a child');\nreturn (await tools.glob({ pattern: '*' })).paths` }));
      expect(body).toMatchObject({ isError: false, value: { logs: ['in a child'], result: [] }, stats: { calls: 1 } });
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(Number(/^ptc_pool_children (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });

  it('a run that finds no free sandbox slot is a 503 with Retry-After', async () => {
    const { url, server } = await startServer({ runtime: 'process', pool: { children: 1, runsPerChild: 1, queueLimit: 0 } });
    try {
      await server.core.runtime.ready();
      const holder = await post(
        `${url}/v1/run`,
        { code: `console.log('started');\nawait new Promise((resolve) => setTimeout(resolve, 20000));`, callId: 'holder' },
        { accept: 'text/event-stream' },
      );
      let busy: Response | undefined;
      await readSse(holder, (event) => {
        if (event.event === 'log') {
          void post(`${url}/v1/run`, { code: 'return 1' }).then(async (response) => {
            busy = response;
            await fetch(`${url}/v1/runs/holder`, { method: 'DELETE' });
          });
        }
      });
      expect(busy!.status).toBe(503);
      expect(busy!.headers.get('retry-after')).toBe('1');
      expect(await json(busy!)).toMatchObject({ code: 'SANDBOX_BUSY' });
    } finally {
      await server.close();
    }
  });
});
