/**
 * An in-memory event sink: events kept in this process, in append order,
 * stamped with a per-session `seq` from 1. For tests, benchmarks and
 * embedders that persist events themselves. Events are shallow-frozen; they
 * share their (frozen) content with the results they describe.
 */
import type { EventSink, NewToolEvent, ToolEvent } from '../events.ts';
import { isoClock } from './iso-clock.ts';

export interface MemoryEventSink extends EventSink {
  append(event: NewToolEvent): ToolEvent;
  /** The events of `sessionId`, or of every session in append order. A fresh array. */
  events(sessionId?: string): ToolEvent[];
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
