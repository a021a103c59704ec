/**
 * Errors across the boundary: `ToolCallError`, which a failed tool call
 * rejects with, and `describeThrown`, which words any thrown value for the host.
 */

import { defineProperty, ErrorCtor, freeze, jsonStringify, StringCtor } from './builtins.ts';
import { formatValue } from './console.ts';

export class ToolCallError extends ErrorCtor {
  readonly toolName: string;
  readonly code: string;
  readonly callId: string;
  constructor(toolName: string, code: string, callId: string, message: string) {
    super(message);
    this.toolName = toolName;
    this.code = code;
    this.callId = callId;
  }
}
defineProperty(ToolCallError.prototype, 'name', { value: 'ToolCallError', writable: true, configurable: true });
freeze(ToolCallError.prototype);
freeze(ToolCallError);

/** A throw that leaves the guest (the program's, or a timer callback's), as the host reads it. */
export function describeThrown(error: unknown): { message: string; stack: string; callId?: string } {
  try {
    if (error instanceof ToolCallError) {
      // The callId lets the host name the failed nested call; the host checks it against its own calls.
      const described = { message: `ToolCallError (${error.code}) from tools[${jsonStringify(error.toolName)}]: ${error.message}`, stack: StringCtor(error.stack) };
      return typeof error.callId === 'string' ? { ...described, callId: error.callId } : described;
    }
    if (error instanceof ErrorCtor) {
      const stack = error.stack;
      return { message: `${StringCtor(error.name)}: ${StringCtor(error.message)}`, stack: typeof stack === 'string' ? stack : '' };
    }
    return { message: `Uncaught ${formatValue(error, 1, [])}`, stack: '' };
  } catch {
    return { message: 'Uncaught a value that could not be described', stack: '' };
  }
}
