import { afterEach, describe, expect, it } from 'vitest';
import { post, readSse, resultEventOf, startServer, type Running, type SseEvent, json } from './helpers.ts';

let running: Running | undefined;
afterEach(async () => {
  await running?.server.close();
  running = undefined;
});

describe('POST /v1/run', () => {
  it('runs a program and returns value, content, events and stats', async () => {
    running = await startServer();
    const response = await post(`${running.url}/v1/run`, {
      code: `await tools.write({ file_path: 'a.txt', content: 'hi' });\nconsole.log('wrote');\nreturn (await tools.read({ file_path: 'a.txt' })).lines[0].text;`,
      sessionId: 'run-ok',
      callId: 'call-ok',
    });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({ callId: 'call-ok', sessionId: 'run-ok', isError: false, value: { logs: ['wrote'], result: 'hi' } });
    expect(body.content[0].type).toBe('text');
    expect(body.events.map((event: { type: string }) => event.type)).toEqual([
      'tool/ptc-dispatch-start',
      'tool/ptc-dispatch',
      'tool/ptc-dispatch-start',
      'tool/ptc-dispatch',
      'tool/result',
    ]);
    expect(body.stats.calls).toBe(2);
    expect(body.stats.wallMs).toBeGreaterThan(0);
    expect(JSON.stringify(body.events)).not.toContain('"value"');
  });

  it("stats carry the run's budgets, in the JSON body and in SSE's result event, and the content stays the model's text", async () => {
    running = await startServer();
    const code = `console.log('counting');\nconst files = await Promise.all([tools.glob({ pattern: '*' }), tools.glob({ pattern: '*.md' })]);\nreturn files.length;`;
    const body = await json(post(`${running.url}/v1/run`, { code, callId: 'budget-json' }));
    expect(body.value.result).toBe(2);
    expect(body.stats).toMatchObject({
      wallMs: expect.any(Number),
      calls: 2,
      maxCalls: expect.any(Number),
      logBytes: 'counting\n'.length,
      maxLogBytes: expect.any(Number),
      resultBytes: 1,
      maxResultBytes: expect.any(Number),
      heapPeakBytes: expect.any(Number),
      heapLimitBytes: expect.any(Number),
    });
    expect(body.stats.heapPeakBytes).toBeLessThanOrEqual(body.stats.heapLimitBytes);
    expect(body.stats.nestedCalls).toEqual([1, 2].map((n) => ({ callId: `budget-json:ptc:${n}`, name: 'glob', isError: false, startMs: expect.any(Number), queuedMs: expect.any(Number), executeMs: expect.any(Number), bytes: expect.any(Number) })));
    expect(body.content).toEqual([{ type: 'text', text: 'counting\n2' }]);

    const events = await readSse(await post(`${running.url}/v1/run`, { code, callId: 'budget-sse' }, { accept: 'text/event-stream' }));
    const result = events.at(-1)!;
    expect(result.event).toBe('result');
    expect(result.data).toMatchObject({ stats: { calls: 2, logBytes: 'counting\n'.length, nestedCalls: [{ callId: 'budget-sse:ptc:1' }, { callId: 'budget-sse:ptc:2' }] } });
  });

  it('?events=summary (the default) gives ids, names, isError and times; full the content too; none nothing', async () => {
    running = await startServer();
    const code = `await tools.write({ file_path: 'b.txt', content: 'secret text' });\nreturn (await tools.read({ file_path: 'b.txt' })).lines[0].text;`;
    const byDefault = await json(post(`${running.url}/v1/run`, { code, sessionId: 'detail', callId: 'd1' }));
    const summary = await json(post(`${running.url}/v1/run?events=summary`, { code, sessionId: 'detail', callId: 'd2' }));
    const full = await json(post(`${running.url}/v1/run?events=full`, { code, sessionId: 'detail', callId: 'd3' }));
    const none = await json(post(`${running.url}/v1/run?events=none`, { code, sessionId: 'detail', callId: 'd4' }));
    for (const body of [byDefault, summary, full, none]) expect(body.value.result).toBe('secret text');

    const keys = (body: { events: object[] }) => body.events.map((event) => Object.keys(event).sort());
    expect(keys(byDefault)).toEqual(keys(summary));
    expect(summary.events[1]).toEqual({
      type: 'tool/ptc-dispatch',
      sessionId: 'detail',
      seq: expect.any(Number),
      at: expect.any(String),
      callId: 'd2:ptc:1',
      rootCallId: 'd2',
      parentCallId: 'd2',
      name: 'write',
      isError: false,
    });
    expect(summary.events.at(-1)).toEqual({ type: 'tool/result', sessionId: 'detail', seq: expect.any(Number), at: expect.any(String), callId: 'd2', name: 'run_code', isError: false });
    expect(JSON.stringify(summary.events)).not.toContain('secret text');

    // The content stays in the session log, which full repeats.
    const log = await json(fetch(`${running.url}/v1/sessions/detail/events`));
    expect(full.events).toEqual(log.events.filter((event: { callId: string; rootCallId?: string }) => (event.rootCallId ?? event.callId) === 'd3'));
    expect(JSON.stringify(full.events)).toContain('secret text');
    expect(full.events.map((event: { seq: number }) => event.seq)).toEqual(summary.events.map((event: { seq: number }) => event.seq + 5));
    expect(none.events).toEqual([]);

    const refused = await post(`${running.url}/v1/run?events=everything`, { code });
    expect(refused.status).toBe(400);
  });

  it('a failing program is still a 200 with isError', async () => {
    running = await startServer();
    const response = await post(`${running.url}/v1/run`, { code: `console.log('before');\nthrow new Error('boom');` });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.isError).toBe(true);
    expect(body.value).toBeUndefined();
    expect(body.error.info.code).toBe('CODE_RUN_FAILED');
    expect(body.error.message).toContain('boom');
    expect(body.sessionId).toBe('default');
  });

  it('streams SSE: dispatch-start before dispatch, logs live and before result', async () => {
    running = await startServer();
    const response = await post(
      `${running.url}/v1/run`,
      { code: `console.log('one');\nawait tools.glob({ pattern: '*' });\nconsole.log('two');\nreturn 42;` },
      { accept: 'text/event-stream' },
    );
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = await readSse(response);
    const names = events.map((event) => event.event);
    expect(names).toEqual(['log', 'ptc-dispatch-start', 'ptc-dispatch', 'log', 'result']);
    expect(events[0].data).toEqual({ line: 'one' });
    expect(events[4].data).toMatchObject({ isError: false, value: { result: 42 }, stats: { calls: 1 } });
  });

  it('DELETE /v1/runs/:callId cancels a running program (202), then 404', async () => {
    running = await startServer();
    const { url } = running;
    const response = await post(
      `${url}/v1/run`,
      { code: `console.log('started');\nawait new Promise((resolve) => setTimeout(resolve, 20000));\nreturn 'late';`, callId: 'to-cancel' },
      { accept: 'text/event-stream' },
    );
    let cancel: Promise<Response> | undefined;
    const events = await readSse(response, (event: SseEvent) => {
      if (event.event === 'log') cancel = fetch(`${url}/v1/runs/to-cancel`, { method: 'DELETE' });
    });
    expect((await cancel!).status).toBe(202);
    const result = events.at(-1)!;
    expect(result.event).toBe('result');
    expect(result.data).toMatchObject({ isError: true, callId: 'to-cancel' });
    expect(JSON.stringify(result.data)).toMatch(/abort/i);
    const again = await fetch(`${url}/v1/runs/to-cancel`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect(await json(again)).toMatchObject({ statusCode: 404, code: 'RUN_NOT_FOUND', error: 'Not Found' });
  });

  it('a client that disconnects cancels its run', async () => {
    running = await startServer();
    const { url, server } = running;
    const settled = resultEventOf(server, 'dropped');
    const controller = new AbortController();
    const response = await fetch(`${url}/v1/run`, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ code: `console.log('started');\nawait new Promise((resolve) => setTimeout(resolve, 20000));`, callId: 'dropped' }),
    });
    const first = await response.body!.getReader().read();
    expect(new TextDecoder().decode(first.value)).toContain('started');
    controller.abort();
    const event = await settled;
    expect(event.isError).toBe(true);
    expect(event.error?.info?.code).toBe('ABORTED');
  });
});
