/**
 * Messages between the type-check pool (typecheck-pool.ts, on the host's
 * event loop) and its worker threads (typecheck-worker.ts). Plain data only:
 * they cross a structured clone.
 */
import type { TypecheckDiagnostic } from '../src/code-mode/typings-service.ts';
import type { TypecheckerOptions } from './typecheck.ts';

/** What each worker is started with. */
export interface TypecheckWorkerData {
  checker: TypecheckerOptions;
}

/**
 * One check of one or more programs against the same typings (see `Typechecker.checkMany`).
 * `typings` is sent only when the worker does not hold version `typingsVersion` yet.
 */
export interface CheckRequest {
  id: number;
  codes: string[];
  typingsVersion: number;
  typings?: string;
}

export type WorkerMessage =
  /** TypeScript and its lib are loaded and a first check has run: the worker takes requests. */
  | { type: 'ready' }
  /** The diagnostics of each program of the request, in order. */
  | { type: 'result'; id: number; diagnostics: TypecheckDiagnostic[][] }
  /** The checker threw. `error` is `Name: message`, without a stack (it could name host paths). */
  | { type: 'failed'; id: number; error: string };
