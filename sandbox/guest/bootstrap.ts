/**
 * The code that runs INSIDE each isolate, and its entry. Loaded as source by
 * sandbox/guest-source.ts and evaluated once per isolate, before any program:
 * it captures the built-ins it relies on, installs `console`,
 * `setTimeout`/`clearTimeout`, `ToolCallError`, removes `WebAssembly`, and
 * returns `start`, which installs `tools` and runs one program. The host
 * bindings (isolated-vm References) live only in this closure; every
 * transfer-options object is frozen with a null prototype.
 *
 * The guest is several files of sandbox/guest/, each one idea, but one closure
 * at run time: the loader puts the files this one imports (and theirs, each
 * before its importers) into installGuest's body, after `'use strict'`, with
 * their `import` lines and `export` words removed. So the captured built-ins
 * and the per-run state are locals of one install, out of the program's reach.
 * A guest file imports only from its siblings, and nothing else but types:
 * the names host.ts declares are installGuest's parameters.
 *
 * The wire (message kinds, formats, the shared memory's layout) is defined in
 * sandbox/crossing/protocol.ts and handed in at install (`wireJson`). Besides the
 * submit and its replies, the host hands over:
 * - log(level, text), ignored; level `notice` is a runtime note that bypasses the cap;
 * - timer(id, ms) resolves to `1` (fired) or `0` (cleared or run ended); clearTimer(id), ignored;
 * - fail(`<{message,stack}>`), ignored: an uncaught error in a timer callback;
 * and calls start(toolNames, config, program, sharedReplies?), push(replies), chunk(ordinal, json)
 * and reusable() (see GuestApi).
 */

import { create, defineProperty, freeze, G, jsonParse, jsonStringify, PromiseCtor, promiseThen, reflectApply, StringCtor } from './builtins.ts';
import { buildTools, chunk, deliver, noteForgotten, useSharedMemory, waitingCount } from './calls.ts';
import { consoleObject, logsSent } from './console.ts';
import { describeThrown, ToolCallError } from './errors.ts';
import type { HostRef } from './host.ts';
import { toJsonText, type Violation } from './lossless-json.ts';
import { recordReads } from './reads.ts';
import { config, configure, type GuestConfig, markReturned, returned } from './run-state.ts';
import { clearTimeoutImpl, setTimeoutImpl } from './timers.ts';
import { RESULT } from './wire.ts';

type Program = () => Promise<unknown>;
export type GuestStart = (toolNamesJson: string, configJson: string, program: Program, sharedReplies?: SharedArrayBuffer) => Promise<string>;
/** What the bootstrap hands the host: `start`, and `push`, by which the host delivers replies unasked. */
export interface GuestApi {
  readonly start: GuestStart;
  readonly push: (batch: string) => void;
  /**
   * From the host: the next slice (JSON of an array of elements) of call `ordinal`'s value, whose
   * reply is `C<count>` (the value is the slices joined) or `C<count>\n<keys JSON>\n<object JSON>`
   * (they make the member down those keys, in place of its null).
   */
  readonly chunk: (ordinal: number, json: string) => void;
  /** After the run: '1' when this context can no longer run anything by itself (see isolate reuse). */
  readonly reusable: () => string;
}

/** The parameters are host.ts's names: the other files of the guest use them as declared there. */
export function installGuest(
  submitRef: HostRef,
  logRef: HostRef,
  timerRef: HostRef,
  clearTimerRef: HostRef,
  failRef: HostRef,
  namesJson: string,
  wireJson: string,
): GuestApi {
  'use strict';
  let started = false;
  /** The program made V8 schedule code of its own for later (see the watched built-ins below). */
  let laterWork = false;

  // ---- globals ----
  const names = jsonParse(namesJson) as { reserved: string[]; removed: string[] };
  for (const removed of names.removed) delete G[removed];
  // The two built-ins that make V8 run code later, outside any await of the program: a
  // FinalizationRegistry's callbacks and Atomics.waitAsync's timeouts. An isolate whose program
  // used either is never used again (see `reusable`): the callback could run during a later run.
  const registryCtor = G.FinalizationRegistry as (new (...args: unknown[]) => object) | undefined;
  if (typeof registryCtor === 'function') {
    const reflectConstruct = Reflect.construct;
    // A null-prototype handler: traps a program added to Object.prototype would be asked for too, and handed the target.
    const watched = new Proxy(
      registryCtor,
      create(null, {
        construct: {
          value: (target: new (...args: unknown[]) => object, args: unknown[], newTarget: new (...args: unknown[]) => object): object => {
            laterWork = true;
            return reflectConstruct(target, args, newTarget);
          },
        },
      }) as ProxyHandler<new (...args: unknown[]) => object>,
    );
    // The prototype's `constructor` would hand out the unwatched one.
    defineProperty(registryCtor.prototype, 'constructor', { value: watched, writable: true, enumerable: false, configurable: true });
    defineProperty(G, 'FinalizationRegistry', { value: watched, writable: true, enumerable: false, configurable: true });
  }
  const waitAsync = (Atomics as { waitAsync?: (...args: unknown[]) => unknown }).waitAsync;
  if (typeof waitAsync === 'function') {
    const watchedWait = {
      waitAsync(...args: unknown[]): unknown {
        laterWork = true;
        return reflectApply(waitAsync, undefined, args);
      },
    }.waitAsync;
    defineProperty(Atomics, 'waitAsync', { value: watchedWait, writable: true, enumerable: false, configurable: true });
  }
  const globals: Record<string, unknown> = { ToolCallError, console: consoleObject, setTimeout: setTimeoutImpl, clearTimeout: clearTimeoutImpl };
  for (const name of names.reserved) {
    if (name in globals) defineProperty(G, name, { value: globals[name], writable: false, enumerable: false, configurable: false });
  }
  // isolated-vm settles host replies through the isolate's own `then`, constructor and species:
  // a program that replaced them failed every tool call, or crashed its run (test/security/escapes).
  defineProperty(PromiseCtor, Symbol.species, { value: PromiseCtor, writable: false, enumerable: false, configurable: false });
  defineProperty(PromiseCtor.prototype, 'constructor', { value: PromiseCtor, writable: false, enumerable: false, configurable: false });
  defineProperty(PromiseCtor.prototype, 'then', { value: promiseThen, writable: false, enumerable: false, configurable: false });

  const encodeResult = ((value: unknown): string => {
    if (value === undefined) return RESULT.none;
    let text: string;
    try {
      text = toJsonText(value, 'result');
    } catch (error) {
      const v = error as Violation;
      return `${RESULT.invalid}the returned value is not lossless JSON: ${v.path} ${v.message}`;
    }
    if (text.length > config.maxResultBytes) {
      return `${RESULT.tooLarge}the returned value is ${text.length} characters of JSON, over the ${config.maxResultBytes}-byte limit: return less (summarise, or page through the data)`;
    }
    return `${RESULT.value}${text}`;
  });

  // The functions every run uses are parenthesised: V8 compiles them with the bootstrap, so they
  // come from the code cache (sandbox/isolate-run.ts) instead of compiling lazily in each isolate
  // (`--log-function-events` lists what still does: ToolPromise's members, which a class keeps lazy).

  // Parenthesised: V8 compiles it eagerly, while the isolate waits in the pool.
  const start = (async function start(toolNamesJson: string, configJson: string, program: Program, sharedReplies?: SharedArrayBuffer): Promise<string> {
    if (started) return '0|E{"message":"Error: the isolate was already used","stack":""}';
    started = true;
    configure(jsonParse(configJson) as GuestConfig);
    if (config.reads !== undefined) recordReads(config.reads);
    if (sharedReplies !== undefined) useSharedMemory(sharedReplies, config.slowTools);
    defineProperty(G, 'tools', { value: buildTools(jsonParse(toolNamesJson) as string[]), writable: false, enumerable: false, configurable: false });
    let reply: string;
    try {
      const value = await program();
      markReturned();
      noteForgotten();
      reply = encodeResult(value);
    } catch (error) {
      markReturned();
      noteForgotten();
      reply = `${RESULT.thrown}${jsonStringify(describeThrown(error))}`;
    }
    return `${logsSent}|${reply}`;
  });
  // Replies the host pushed while the guest waited for the answer to its submit (big replies of a
  // fan-out, parsed here while the host still works on the rest).
  const push = (function push(batch: string): void {
    deliver(StringCtor(batch));
  });
  // Asked by the host once a run has ended, as a task of its own: the program's microtasks have all
  // run by then. '1': nothing of this context can run again unless the host calls into it, so the
  // isolate may host another run in a fresh context.
  const reusable = (function reusable(): string {
    return returned && !laterWork && waitingCount === 0 ? '1' : '0';
  });
  return freeze(
    create(null, {
      start: { value: start, enumerable: true },
      push: { value: push, enumerable: true },
      chunk: { value: chunk, enumerable: true },
      reusable: { value: reusable, enumerable: true },
    }),
  ) as GuestApi;
}
