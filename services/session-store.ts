/**
 * The session store the service reads and watches: a tee around a durable
 * event sink. Pass it to `createToolRegistry({ eventSink })` so the service
 * can observe one run's events as they are appended (for `events` in the
 * response and for SSE), keyed by the run's root call id.
 */
import { createEventCapper, type EventCaps } from '../src/event-sinks/event-caps.ts';
import type { EventPage, EventSink, NewToolEvent, ReadPageOptions, ToolEvent } from '../src/events.ts';

export type { EventPage, ReadPageOptions } from '../src/events.ts';

/** The read side of a durable sink (the JSONL sink has it): one page at a time, never the whole log. */
export interface SessionEventReader {
  readPage(sessionId: string, options?: ReadPageOptions): EventPage | Promise<EventPage>;
  /** Whether the sink can write right now (the JSONL sink has it); `/readyz` fails while it cannot. */
  health?(): Promise<SinkState>;
  /** The sink's last known state, without probing (the JSONL sink has it): new runs are refused while it is not ok. */
  writeState?(): SinkState;
}

export type SinkState = { ok: true } | { ok: false; code: string; message: string };

/**
 * Called synchronously inside `append`, in append order: with the stamped
 * event, or with a promise of it while the sink is still opening the session
 * file. Calling order is the order things happened (a consumer merging other
 * sources, such as log lines, keeps it by queueing the promise).
 */
export type EventListener = (event: ToolEvent | Promise<ToolEvent>) => void;

export interface SessionStore extends EventSink, SessionEventReader {
  /** Calls `listener` with every event of the run rooted at `rootCallId` as it is appended (see {@link EventListener}). Returns unsubscribe. */
  watch(rootCallId: string, listener: EventListener): () => void;
  /** Calls `onWake` after each flush of `sessionId` in this process (its events are then readable). Returns unsubscribe. */
  followSession(sessionId: string, onWake: () => void): () => void;
  /** Appends or flushes of `sessionId` that failed so far (events lost), and the last failure; compare before and after a call. */
  losses(sessionId: string): { count: number; reason?: string };
}

/** The root call id an event belongs to: its own callId for `tool/result`. */
export function rootOf(event: ToolEvent | NewToolEvent): string {
  return event.type === 'tool/result' ? event.callId : event.rootCallId;
}

/** Sessions with lost events remembered at once. */
const MAX_LOSS_RECORDS = 10_000;

export interface SessionStoreOptions {
  /** Caps on the content stored per event and per run; see {@link EventCaps} for each default. */
  caps?: Partial<EventCaps>;
}

export function createSessionStore(sink: EventSink & SessionEventReader, options: SessionStoreOptions = {}): SessionStore {
  const cap = createEventCapper(options.caps);
  const watchers = new Map<string, Set<EventListener>>();
  const followers = new Map<string, Set<() => void>>();
  const wake = (sessionId: string) => {
    for (const onWake of followers.get(sessionId) ?? []) {
      try {
        onWake();
      } catch {
        // A follower (an HTTP stream) never fails the run that flushed.
      }
    }
  };

  /** Sessions whose events were lost, with how often and the last reason; the oldest is forgotten past the bound. */
  const lost = new Map<string, { count: number; reason: string }>();
  const recordLoss = (sessionId: string, error: unknown): void => {
    const previous = lost.get(sessionId);
    lost.delete(sessionId);
    if (previous === undefined && lost.size >= MAX_LOSS_RECORDS) lost.delete(lost.keys().next().value as string);
    const reason = (error as { reason?: unknown } | undefined)?.reason;
    lost.set(sessionId, { count: (previous?.count ?? 0) + 1, reason: typeof reason === 'string' ? reason : 'EVENT_LOG_FAILED' });
  };

  const notify = (root: string, event: ToolEvent | Promise<ToolEvent>): void => {
    const listeners = watchers.get(root);
    if (listeners !== undefined) {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch {
          // A watcher (an HTTP stream) must never fail the run that appends.
        }
      }
    }
  };

  return {
    append(original) {
      const event = cap(original);
      let stamped: ToolEvent | Promise<ToolEvent>;
      try {
        stamped = sink.append(event);
      } catch (error) {
        recordLoss(event.sessionId, error);
        throw error;
      }
      if (stamped instanceof Promise) stamped.catch((error: unknown) => recordLoss(event.sessionId, error));
      notify(rootOf(event), stamped);
      return stamped;
    },
    losses(sessionId) {
      const record = lost.get(sessionId);
      return record === undefined ? { count: 0 } : { ...record };
    },
    async flush(sessionId) {
      try {
        await sink.flush?.(sessionId);
      } catch (error) {
        recordLoss(sessionId, error);
        throw error;
      } finally {
        wake(sessionId);
      }
    },
    followSession(sessionId, onWake) {
      let set = followers.get(sessionId);
      if (set === undefined) followers.set(sessionId, (set = new Set()));
      set.add(onWake);
      return () => {
        set.delete(onWake);
        if (set.size === 0 && followers.get(sessionId) === set) followers.delete(sessionId);
      };
    },
    readPage(sessionId, options) {
      return sink.readPage(sessionId, options);
    },
    ...(sink.health === undefined ? {} : { health: () => sink.health!() }),
    ...(sink.writeState === undefined ? {} : { writeState: () => sink.writeState!() }),
    watch(rootCallId, listener) {
      let listeners = watchers.get(rootCallId);
      if (listeners === undefined) watchers.set(rootCallId, (listeners = new Set()));
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && watchers.get(rootCallId) === listeners) watchers.delete(rootCallId);
      };
    },
  };
}
