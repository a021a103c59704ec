/**
 * An {@link Agent} that makes every inject durable: one `agent/context`
 * event in the session log of the injecting call. Pass it as
 * `DispatchRequest.agent`; the service does, for every call it runs.
 * It never throws into the tool: a sink that fails is reported to
 * `onSinkError`, like a lost `tool/result`. The registry already drops an
 * inject made after its call settled, so no event lands after the
 * `tool/result` of its run; the outer dispatch's flush makes the events
 * durable before the call returns.
 */
import type { EventSink, NewToolEvent } from './events.ts';
import type { Agent } from './tool.ts';

export function createEventAgent(
  sink: EventSink,
  onSinkError: (error: unknown, event: NewToolEvent) => void,
  onInject?: Agent['inject'],
): Agent {
  const report = (error: unknown, event: NewToolEvent): void => {
    try {
      onSinkError(error, event);
    } catch {
      // A reporter that throws must not reach the tool.
    }
  };
  return Object.freeze({
    inject(context, origin) {
      const event: NewToolEvent = {
        type: 'agent/context',
        sessionId: origin.sessionId,
        rootCallId: origin.rootCallId,
        callId: origin.callId,
        name: origin.name,
        content: context.content,
        source: context.source,
      };
      try {
        const appended = sink.append(event);
        if (appended instanceof Promise) appended.catch((error: unknown) => report(error, event));
      } catch (error) {
        report(error, event);
      }
      onInject?.(context, origin);
    },
  } satisfies Agent);
}
