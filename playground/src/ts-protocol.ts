/** Messages between the page and the TypeScript worker (ts-worker.ts). */

export interface TsCompletion {
  name: string;
  kind: string;
  sortText: string;
  insertText?: string;
  /** The type, shown beside the name (member completions only). */
  detail?: string;
  /** Declaration and documentation, shown in the info panel (member completions only). */
  info?: string;
}

export interface TsCompletions {
  /** Where the completed word starts, in program coordinates. */
  from: number;
  entries: TsCompletion[];
}

export interface TsDiagnostic {
  from: number;
  to: number;
  message: string;
  severity: 'error' | 'warning';
}

export interface TsTooltip {
  from: number;
  to: number;
  text: string;
}

export type TsRequest =
  | { op: 'typings'; text: string }
  | { op: 'completions'; code: string; pos: number }
  | { op: 'diagnostics'; code: string }
  | { op: 'quickInfo'; code: string; pos: number }
  | { op: 'signature'; code: string; pos: number };

export interface TsResults {
  typings: null;
  completions: TsCompletions | null;
  diagnostics: TsDiagnostic[];
  quickInfo: TsTooltip | null;
  signature: TsTooltip | null;
}
