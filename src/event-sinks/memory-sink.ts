/**
 * An in-memory event sink: events kept in this process, in append order,
 * stamped with a per-session `seq` from 1. For tests, benchmarks and
 * embedders that persist events themselves. Events are shallow-frozen; they
 * share their (frozen) content with the results they describe.
 */
import { DEFAULT_PAGE_BYTES, DEFAULT_PAGE_LIMIT, type EventPage, type EventSink, type NewToolEvent, type ReadPageOptions, type ToolEvent } from '../events.ts';
import { isoClock } from './iso-clock.ts';

export interface MemoryEventSink extends EventSink {
  append(event: NewToolEvent): ToolEvent;
  /** The events of `sessionId`, or of every session in append order. A fresh array. */
  events(sessionId?: string): ToolEvent[];
  /** One page of a session's events with `seq > after`, as the durable sinks page them. */
  readPage(sessionId: string, options?: ReadPageOptions): EventPage;
  /** Forgets the events of `sessionId` (or all). `seq` keeps counting. */
  clear(sessionId?: string): void;
}

export function createMemoryEventSink(): MemoryEventSink {
  let all: ToolEvent[] = [];
  const bySession = new Map<string, ToolEvent[]>();
  const seqs = new Map<string, number>();
  const clock = isoClock();
  return {
    append(event) {
      const { sessionId } = event;
      const seq = (seqs.get(sessionId) ?? 0) + 1;
      seqs.set(sessionId, seq);
      const stamped = Object.freeze({ ...event, seq, at: clock() }) as ToolEvent;
      all.push(stamped);
      let list = bySession.get(sessionId);
      if (list === undefined) bySession.set(sessionId, (list = []));
      list.push(stamped);
      return stamped;
    },
    events(sessionId) {
      if (sessionId === undefined) return all.slice();
      return bySession.get(sessionId)?.slice() ?? [];
    },
    readPage(sessionId, options = {}) {
      const list = bySession.get(sessionId) ?? [];
      const after = options.after ?? 0;
      const limit = Math.max(1, options.limit ?? DEFAULT_PAGE_LIMIT);
      const maxBytes = Math.max(1, options.maxBytes ?? DEFAULT_PAGE_BYTES);
      // Seqs increase along the list: find the first one past `after` by bisection.
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (list[mid].seq <= after) lo = mid + 1;
        else hi = mid;
      }
      const events: ToolEvent[] = [];
      let bytes = 0;
      for (let i = lo; i < list.length; i++) {
        const size = JSON.stringify(list[i]).length;
        if (events.length >= limit || (events.length > 0 && bytes + size > maxBytes)) return { events, next: events[events.length - 1].seq };
        events.push(list[i]);
        bytes += size;
      }
      return { events };
    },
    clear(sessionId) {
      if (sessionId === undefined) {
        all = [];
        bySession.clear();
        return;
      }
      bySession.delete(sessionId);
      all = all.filter((e) => e.sessionId !== sessionId);
    },
  };
}
