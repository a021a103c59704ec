/**
 * The agent handle a call's body sees (`exec.agent`). The registry binds the
 * harness's {@link Agent} to each call: the handle checks the context, names
 * the injecting call (a tool cannot claim another call's id), and is live
 * only while its call runs. After the call settles an inject is dropped
 * without an error, so a tool that injects from a late callback neither
 * throws nor writes into a run that has already reported its result.
 * A nested call (from a program) passes its run's handle as its `agent`;
 * binding unwraps it, so every call reaches the harness's own agent.
 */
import { readInjectedContext } from './contexts.ts';
import type { Agent, AgentContext, AgentHandle, InjectOrigin } from './tool.ts';

class BoundAgent implements AgentHandle {
  readonly #agent: Agent;
  readonly #origin: InjectOrigin;
  #live = true;

  constructor(agent: Agent, origin: InjectOrigin) {
    this.#agent = agent;
    this.#origin = Object.freeze({ ...origin });
    Object.freeze(this);
  }

  // An own arrow function: `const { inject } = exec.agent` still works.
  readonly inject = (context: AgentContext): void => {
    if (!this.#live) return;
    this.#agent.inject(readInjectedContext(context), this.#origin);
  };

  static rawOf(x: unknown): Agent | undefined {
    return typeof x === 'object' && x !== null && #agent in x ? (x as BoundAgent).#agent : undefined;
  }

  static end(x: BoundAgent): void {
    x.#live = false;
  }
}

/** The handle for one call; `agent` may itself be another call's handle. */
export function bindAgent(agent: Agent, origin: InjectOrigin): AgentHandle {
  return new BoundAgent(BoundAgent.rawOf(agent) ?? agent, origin);
}

/** The call settled: later injects through `handle` are dropped. */
export function endAgent(handle: AgentHandle): void {
  if (handle instanceof BoundAgent) BoundAgent.end(handle);
}

/** True when `x` can serve as an agent (it has an `inject` method). */
export function isAgent(x: unknown): x is Agent {
  try {
    return typeof x === 'object' && x !== null && typeof (x as { inject?: unknown }).inject === 'function';
  } catch {
    return false;
  }
}
