/** A live SSE reader for tests: events as they arrive, and a wait for one that matches. */
import { readSse } from '../services/helpers.ts';

export interface SseEvent {
  event: string;
  data: { type?: string; seq?: number; callId?: string; rootCallId?: string; [key: string]: unknown };
}

export interface SseReader {
  events: SseEvent[];
  /** Resolves with the first event (already received or later) that matches. */
  until(match: (event: SseEvent) => boolean): Promise<SseEvent>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  if (response.status !== 200) throw new Error(`SSE ${url}: ${response.status} ${await response.text()}`);
  const events: SseEvent[] = [];
  const waiters: { match: (event: SseEvent) => boolean; resolve: (event: SseEvent) => void }[] = [];
  const push = (event: SseEvent) => {
    events.push(event);
    for (const waiter of [...waiters]) {
      if (waiter.match(event)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    }
  };
  // The shared parser; an abort by the test ends the stream.
  readSse(response, (event) => push(event as SseEvent)).catch(() => undefined);
  return {
    events,
    until(match) {
      const found = events.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    close: () => controller.abort(),
  };
}
