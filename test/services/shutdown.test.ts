import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { post, readSse, startServer } from './helpers.ts';

describe('graceful close', () => {
  it('cancels runs still going after the grace period, keeps their events, and refuses new calls', async () => {
    const { url, server, config } = await startServer({ shutdownGraceMs: 50 });
    const response = await post(
      `${url}/v1/run`,
      { code: `console.log('started');\nawait new Promise((resolve) => setTimeout(resolve, 20000));`, sessionId: 'grace', callId: 'slow' },
      { accept: 'text/event-stream' },
    );
    expect(response.status).toBe(200);
    let closed: Promise<void> | undefined;
    const events = await readSse(response, (event) => {
      if (event.event === 'log') closed = server.close();
    });
    expect(events.map((event) => event.event)).toEqual(['log', 'result']);
    expect(events.at(-1)).toMatchObject({ event: 'result', data: { isError: true, error: { info: { code: 'ABORTED' } } } });
    await closed;
    const log = await readFile(path.join(config.dataDir, 'sessions/grace.jsonl'), 'utf8');
    expect(JSON.parse(log.trim().split('\n').at(-1)!)).toMatchObject({ type: 'tool/result', callId: 'slow', isError: true });
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
