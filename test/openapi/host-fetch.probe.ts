/**
 * Run by requests.test.ts in a process of its own, where undici is not loaded yet: uses Node's
 * fetch, then an OpenAPI tool, then fetch again, and prints as JSON whether fetch still went
 * through the dispatcher it had before. The process must then end by itself, with the
 * OpenAPI client never closed. PROBE_BASE_URL, when set, is asked instead of the probe's own
 * server (a host only a proxy answers).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openApiTools } from '../../src/openapi/index.ts';
import { createToolRegistry } from '../../src/registry.ts';

const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = process.env.PROBE_BASE_URL ?? `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const slot = Symbol.for('undici.globalDispatcher.1');
const dispatcherOfFetch = () => (globalThis as unknown as Record<symbol, unknown>)[slot];

const before = await (await fetch(`${baseUrl}/before`)).json();
const dispatcher = dispatcherOfFetch();
const registry = createToolRegistry();
const spec = { openapi: '3.0.3', info: { title: 'Probe', version: '1' }, paths: { '/ping': { get: { operationId: 'ping', responses: { '200': { description: 'ok' } } } } } };
for (const definition of await openApiTools({ name: 'probe', spec, baseUrl })) registry.register(definition);
const called = await registry.dispatch({ name: 'probe__ping', arguments: {} });
const after = await (await fetch(`${baseUrl}/after`)).json();
console.log(JSON.stringify({ before, called: called.isError ? called.error.message : called.value, after, sameDispatcher: dispatcherOfFetch() === dispatcher }));
server.closeAllConnections();
server.close();
