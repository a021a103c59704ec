/**
 * Commit order, a step of the nested-call pipeline between around-dispatch and post-execute: a
 * nested call whose body has finished waits there until the call submitted before it in the same
 * run has settled, so post-execute hooks, events and results follow submission order while the
 * bodies overlap. Code Mode's scheduler names each call's predecessor; the pipeline asks here.
 */
import type { DispatchToken, ToolExec } from './tool.ts';

/** A run's predecessors: callId → the call submitted just before it, while that one may still be running. */
export interface CommitGates<Call extends { readonly done: boolean }> {
  readonly previous: ReadonlyMap<string, Call>;
  /** Resolves once `call` has settled. */
  settled(call: Call): Promise<void>;
}

/** Keyed by the run's own dispatch token: two registries or runs never see each other's gates. */
const runs = new WeakMap<DispatchToken, CommitGates<{ readonly done: boolean }>>();

/** Opens the commit order of the run dispatched as `run`: its nested calls wait as `gates` says. */
export function orderCommits<Call extends { readonly done: boolean }>(run: DispatchToken, gates: CommitGates<Call>): void {
  runs.set(run, gates as unknown as CommitGates<{ readonly done: boolean }>);
}

/** What a nested call must wait for before it commits, or undefined (most calls: nothing overlaps them). */
export function commitHold(exec: ToolExec): Promise<void> | undefined {
  if (exec.parent === undefined) return undefined;
  const gates = runs.get(exec.parent);
  const previous = gates?.previous.get(exec.callId);
  return previous === undefined || previous.done ? undefined : gates!.settled(previous);
}
