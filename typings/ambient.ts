/**
 * The globals a program sees besides the ES built-ins and the tool typings
 * (sandbox/reserved-names.ts): a console and host timers. Declared for the
 * type-check only; the model is told about them in the prompt. No DOM, no Node.
 */
export const AMBIENT_GLOBALS = `\
interface Console {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  debug(...data: unknown[]): void;
}
declare const console: Console;
declare function setTimeout(handler: (...args: unknown[]) => void, timeout?: number, ...args: unknown[]): number;
declare function clearTimeout(id: number | undefined): void;
`;
