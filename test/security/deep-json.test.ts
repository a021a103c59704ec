/**
 * Deeply nested JSON bodies against a real server (port 0): parsing one,
 * and the frozen copy its arguments get, held the event loop for every
 * tenant, so a body nesting arrays and objects deeper than MAX_BODY_DEPTH
 * is refused before it is parsed, on the HTTP routes and on /mcp alike,
 * with 400 `BODY_TOO_DEEP`. A body at the bound still works, and brackets
 * inside strings (a program's code) are not nesting.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { MAX_BODY_DEPTH } from '../../services/config-defaults.ts';
import { nestsDeeperThan, useStrictUtf8Json } from '../../services/utf8-json.ts';
import { readSse, startServer, type Running } from '../services/helpers.ts';

/** `k` arrays, one inside the other, around `inner`. */
const nest = (k: number, inner = '1') => '['.repeat(k) + inner + ']'.repeat(k);

/** As deep as the audit's request (400,000 levels) in kind; deep enough that the old parse and copy showed. */
const VERY_DEEP = 100_000;

const REFUSAL = {
  statusCode: 400,
  code: 'BODY_TOO_DEEP',
  error: 'Bad Request',
  message: `the JSON body nests deeper than ${MAX_BODY_DEPTH} levels of arrays and objects: send flatter data`,
};

/** A program whose code holds 10,000 '[' in a string, after an escaped quote and backslash. */
const BRACKETS_IN_CODE = `return "\\\\\\"${'['.repeat(10_000)}".length`;

let running: Running;
let client: Client;
let transport: StreamableHTTPClientTransport;

beforeAll(async () => {
  running = await startServer({ mode: 'both' });
  running.server.core.registry.register(
    defineTool({
      name: 'depth',
      description: 'How deep its value nests arrays.',
      parameters: { value: { type: 'json', required: true } },
      output: { schema: { type: 'integer' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
      async execute(args) {
        let depth = 0;
        for (let value: unknown = args.value; Array.isArray(value); value = value[0]) depth++;
        return depth;
      },
    }),
  );
  transport = new StreamableHTTPClientTransport(new URL('/mcp', running.url));
  client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(transport);
});
afterAll(async () => {
  await client.close();
  await running.server.close();
});

function postText(path: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(new URL(path, running.url), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

const mcpHeaders = () => ({
  accept: 'application/json, text/event-stream',
  'mcp-session-id': transport.sessionId!,
  'mcp-protocol-version': transport.protocolVersion ?? '2025-06-18',
});

describe('JSON bodies nested deeper than MAX_BODY_DEPTH', () => {
  // Each body nests MAX_BODY_DEPTH + 1 levels or far more; the outer object counts as one.
  const cases: [string, string, string][] = [
    ['POST /v1/run, one level too deep', '/v1/run', `{"code":"return 1","x":${nest(MAX_BODY_DEPTH)}}`],
    ['POST /v1/run, a bare deep array', '/v1/run', nest(VERY_DEEP)],
    ['POST /v1/tools/run_code, one level too deep', '/v1/tools/run_code', `{"arguments":{"code":"return 1","description":"d","x":${nest(MAX_BODY_DEPTH - 1)}}}`],
    ['POST /v1/tools/run_code, very deep', '/v1/tools/run_code', `{"arguments":{"code":"return 1","description":"d","x":${nest(VERY_DEEP)}}}`],
    ['POST /v1/tools/depth, very deep objects', '/v1/tools/depth', `{"arguments":{"value":${'{"a":'.repeat(VERY_DEEP)}1${'}'.repeat(VERY_DEEP)}}}`],
  ];
  it.each(cases)('%s: 400 BODY_TOO_DEEP', async (_name, path, body) => {
    const response = await postText(path, body);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(REFUSAL);
  });

  it('/mcp: a deep tools/call and a deep initialize are refused the same way', async () => {
    const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"return 1","description":"d","x":${nest(VERY_DEEP)}}}}`;
    const refused = await postText('/mcp', call, mcpHeaders());
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual(REFUSAL);

    const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"x":${nest(MAX_BODY_DEPTH)}},"clientInfo":{"name":"t","version":"1"}}}`;
    const refusedInit = await postText('/mcp', initialize, { accept: 'application/json, text/event-stream' });
    expect(refusedInit.status).toBe(400);
    expect(await refusedInit.json()).toEqual(REFUSAL);

    // The session is untouched.
    const result = (await client.callTool({ name: 'run_code', arguments: { code: 'return 1', description: 'after' } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
  });
});

describe('bodies the bound lets through', () => {
  it('a body nesting exactly MAX_BODY_DEPTH levels reaches the tool whole', async () => {
    // Outer object, `arguments`, then the value's arrays.
    const response = await postText('/v1/tools/depth', `{"arguments":{"value":${nest(MAX_BODY_DEPTH - 2)}}}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ isError: false, value: MAX_BODY_DEPTH - 2 });
  });

  it('/mcp: a message nesting exactly MAX_BODY_DEPTH levels is answered', async () => {
    // Message, params, arguments, then the extra field's arrays (run_code ignores it).
    const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"return 2","description":"d","x":${nest(MAX_BODY_DEPTH - 3)}}}}`;
    const response = await postText('/mcp', call, mcpHeaders());
    expect(response.status).toBe(200);
    const answer = (await readSse(response)).map((event) => event.data).find((data) => (data as { id?: unknown }).id === 7);
    expect(answer).toMatchObject({ result: { structuredContent: { result: 2 } } });
  });

  it('brackets inside strings are not nesting: a program with 10,000 "[" in its code runs', async () => {
    const run = await postText('/v1/run', JSON.stringify({ code: BRACKETS_IN_CODE }));
    expect(run.status).toBe(200);
    expect(await run.json()).toMatchObject({ isError: false, value: { result: 10_002 } });

    const tool = await postText('/v1/tools/run_code', JSON.stringify({ arguments: { code: BRACKETS_IN_CODE, description: 'brackets' } }));
    expect(tool.status).toBe(200);
    expect(await tool.json()).toMatchObject({ isError: false, value: { result: 10_002 } });

    const result = (await client.callTool({ name: 'run_code', arguments: { code: BRACKETS_IN_CODE, description: 'brackets' } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ result: 10_002 });
  });
});

describe('nestsDeeperThan', () => {
  const deeper = (text: string, max: number) => nestsDeeperThan(Buffer.from(text), max);

  it('counts arrays and objects alike, and only open ones', () => {
    expect(deeper('[{"a":[1]}]', 3)).toBe(false);
    expect(deeper('[{"a":[1]}]', 2)).toBe(true);
    expect(deeper('[1],[2],[3],{},{}', 1)).toBe(false);
  });

  it('skips strings, escaped quotes and backslashes included', () => {
    expect(deeper('["[[[[", "{{{{"]', 1)).toBe(false);
    expect(deeper(String.raw`["\"[[[[", "\\", [1]]`, 1)).toBe(true);
    expect(deeper(String.raw`["\\\"[[[[\\"]`, 1)).toBe(false);
    expect(deeper(String.raw`{"k\"[[[":"\u005b[["}`, 1)).toBe(false);
    expect(deeper('["ü€😀[[[", {"ü":[]}]', 3)).toBe(false);
  });

  it('leaves malformed text to the parser', () => {
    expect(deeper(']]]][[', 2)).toBe(false);
    expect(deeper('["unterminated [[[[', 1)).toBe(false);
  });
});

describe('useStrictUtf8Json on a host instance', () => {
  it("refuses a deep body on a host's own route, as createServer does", async () => {
    const app = Fastify();
    useStrictUtf8Json(app);
    app.post('/echo', async (request) => request.body);
    try {
      const deep = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: nest(VERY_DEEP) });
      expect(deep.statusCode).toBe(400);
      expect(deep.json()).toMatchObject({ message: REFUSAL.message });
      const flat = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{"a":[1,[2]]}' });
      expect(flat.json()).toEqual({ a: [1, [2]] });
    } finally {
      await app.close();
    }
  });
});
