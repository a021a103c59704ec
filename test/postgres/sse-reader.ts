/** A live SSE reader for tests: events as they arrive, and a wait for one that matches. */
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
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const name = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (name !== undefined && data !== undefined) push({ event: name, data: JSON.parse(data) as SseEvent['data'] });
        }
      }
    } catch {
      // Closed by the test.
    }
  })();
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
