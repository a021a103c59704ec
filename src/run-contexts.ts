/**
 * The contexts one run produced, as its response hands them to the harness
 * for the next model request: first those tools injected with
 * `exec.agent.inject` while the run went on (in order), then those
 * post-execute hooks attached to its result (for run_code, also those
 * attached to its nested calls). The service reads them from the run's
 * durable events (`agent/context`, then `tool/result`); the library's
 * `asTool` from what its agent heard and the result.
 */
import type { ContentBlock } from './content.ts';
import type { ToolEvent } from './events.ts';
import type { HookContext, InjectedContext, InjectOrigin } from './tool.ts';

export interface RunContext {
  /** `inject`: a tool called `exec.agent.inject`; `hook`: a post-execute hook attached it to a result. */
  via: 'inject' | 'hook';
  content: ContentBlock[];
  /** `inject`: the injecting plugin's name; `hook`: the hook's label, when it gave one. */
  source?: string;
  /** `inject`: the call that injected (the run itself or one of its nested calls). */
  callId?: string;
}

export function injectedContext(context: InjectedContext, origin: Pick<InjectOrigin, 'callId'>): RunContext {
  return { via: 'inject', content: context.content, source: context.source.plugin, callId: origin.callId };
}

export function hookContexts(contexts: readonly HookContext[] | undefined): RunContext[] {
  if (contexts === undefined) return [];
  return contexts.map((context) => {
    const content = typeof context.content === 'string' ? [{ type: 'text' as const, text: context.content }] : context.content;
    return context.source === undefined ? { via: 'hook', content } : { via: 'hook', content, source: context.source };
  });
}

/** A run's contexts from its events (in log order): injects, then the result's. */
export function contextsOfEvents(events: readonly ToolEvent[]): RunContext[] {
  const out: RunContext[] = [];
  for (const event of events) {
    if (event.type === 'agent/context') out.push(injectedContext(event, event));
    else if (event.type === 'tool/result') out.push(...hookContexts(event.additionalContexts));
  }
  return out;
}
