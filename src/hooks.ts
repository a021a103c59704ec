/**
 * The hook lists of one registry. Lists are replaced, never mutated, so a
 * dispatch in flight keeps the hooks it started with. Hooks run in
 * registration order; for `tools/execute` the first registered is outermost.
 */
import type { AdmitHook, ExecuteHook, HookMap, PostExecuteHook } from './tool.ts';

export interface HookLists {
  readonly admit: readonly AdmitHook[];
  readonly execute: readonly ExecuteHook[];
  readonly postExecute: readonly PostExecuteHook[];
}

const FIELD = {
  'tools/admit': 'admit',
  'tools/execute': 'execute',
  'tools/post-execute': 'postExecute',
} as const satisfies Record<keyof HookMap, keyof HookLists>;

export interface HookStore {
  /** The current lists (a new object after every change). */
  current(): HookLists;
  add<K extends keyof HookMap>(kind: K, hook: HookMap[K]): () => void;
}

export function createHookStore(): HookStore {
  let lists: HookLists = { admit: [], execute: [], postExecute: [] };
  return {
    current: () => lists,
    add(kind, hook) {
      if (!Object.hasOwn(FIELD, kind)) {
        throw new TypeError(`unknown hook kind ${JSON.stringify(kind)}: use 'tools/admit', 'tools/execute' or 'tools/post-execute'`);
      }
      if (typeof hook !== 'function') throw new TypeError(`a ${kind} hook must be a function`);
      const field = FIELD[kind];
      lists = { ...lists, [field]: (lists[field] as unknown[]).concat([hook]) };
      let disposed = false;
      return () => {
        if (disposed) return;
        disposed = true;
        // One function registered twice is two entries; removing either keeps the behaviour of the rest.
        const list = lists[field] as unknown[];
        const index = list.lastIndexOf(hook);
        if (index >= 0) lists = { ...lists, [field]: list.slice(0, index).concat(list.slice(index + 1)) };
      };
    },
  };
}
