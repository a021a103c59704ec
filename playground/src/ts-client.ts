/** The page's side of the TypeScript worker: one promise per request. */
import type { TsRequest, TsResults } from './ts-protocol.ts';

type Pending = { resolve(value: unknown): void; reject(error: Error): void };

export interface TsClient {
  request<R extends TsRequest>(request: R): Promise<TsResults[R['op']]>;
}

export function createTsClient(): TsClient {
  const worker = new Worker(new URL('./ts-worker.ts', import.meta.url), { type: 'module', name: 'typescript' });
  const pending = new Map<number, Pending>();
  let next = 0;
  worker.onmessage = (event: MessageEvent<{ id: number; result?: unknown; error?: string }>) => {
    const entry = pending.get(event.data.id);
    if (entry === undefined) return;
    pending.delete(event.data.id);
    if (event.data.error !== undefined) entry.reject(new Error(event.data.error));
    else entry.resolve(event.data.result);
  };
  worker.onerror = (event) => {
    for (const entry of pending.values()) entry.reject(new Error(`the TypeScript worker failed: ${event.message}`));
    pending.clear();
  };
  return {
    request(request) {
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        worker.postMessage({ id, request });
      });
    },
  };
}
