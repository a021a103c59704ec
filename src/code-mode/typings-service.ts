/**
 * The boundary between Code Mode (src/) and the typings generator (typings/),
 * types only: code mode asks for typings, the prompt and (opt-in) a
 * type-check; `typings/` implements it.
 */
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
  /** Type-checks a program body against the typings; [] when clean. */
  check(code: string, schemas: readonly ToolSchema[]): Promise<TypecheckDiagnostic[]>;
}
