/**
 * The boundary between Code Mode (src/) and the typings generator (typings/),
 * types only: code mode asks for typings, the prompt and (opt-in) a
 * type-check; `typings/` implements it.
 */
import type { QueueOwner } from '../fair-queue.ts';
import type { ToolSchema } from '../tool.ts';
import type { CodeModeLimits } from './limits.ts';

export interface TypecheckDiagnostic {
  /** 1-based, in the model's own source. */
  line: number;
  column: number;
  /** TypeScript's diagnostic code, e.g. 2339. */
  code: number;
  message: string;
}

export interface TypingsService {
  /** The `.d.ts` the model is shown, byte-stable, sorted by tool name. Cached by a hash of the schemas. */
  typings(schemas: readonly ToolSchema[]): Promise<string>;
  /**
   * Model-facing instructions followed by the typings in a ts block (markdown).
   * Code mode passes the limits it enforces, so the prompt states those.
   */
  prompt(schemas: readonly ToolSchema[], limits?: Readonly<CodeModeLimits>): Promise<string>;
  /**
   * Type-checks a program body against the typings; [] when clean. Rejects when the check could
   * not complete (its budget ran out, the run was cancelled, the checker failed): the program is
   * then unchecked, never clean. A rejection named `TypecheckIncompleteError` has a message written
   * for the model; any other is reported without its message.
   */
  check(code: string, schemas: readonly ToolSchema[], budget?: TypecheckBudget): Promise<TypecheckDiagnostic[]>;
  /** Starts the checker ahead of the first check (code mode calls it when type-checking is on). */
  warm?(): void;
  /** Releases what the checker holds (its worker threads). */
  close?(): Promise<void>;
}

/** What one check may spend: its share of the run's time, and the run's signal. */
export interface TypecheckBudget {
  /** Longest the check may take, ms. */
  timeoutMs?: number;
  /** The run's signal: the check stops when it fires. */
  signal?: AbortSignal;
  /** Whose turn the check waits for among others queued for the checker (src/fair-queue.ts). */
  owner?: QueueOwner;
}
