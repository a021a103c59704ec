/**
 * Live console lines, routed to the HTTP request that started the run. Code
 * mode reports every line of every run through its `onLog(line, {callId})`
 * option; pass `router.onLog` there and the router to the plugin.
 */
export type LogListener = (line: string) => void;

export interface LogRouter {
  /** Give this to `createCodeMode({ onLog })`. */
  onLog(line: string, call: { callId: string }): void;
  /** Calls `listener` with each line of the run `callId`. Returns unsubscribe. */
  watch(callId: string, listener: LogListener): () => void;
}

export function createLogRouter(): LogRouter {
  const listeners = new Map<string, LogListener>();
  return {
    onLog(line, call) {
      const listener = listeners.get(call.callId);
      if (listener === undefined) return;
      try {
        listener(line);
      } catch {
        // A broken stream must never fail the run that logs.
      }
    },
    watch(callId, listener) {
      listeners.set(callId, listener);
      return () => {
        if (listeners.get(callId) === listener) listeners.delete(callId);
      };
    },
  };
}
