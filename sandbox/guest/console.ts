/**
 * The guest's `console`: values formatted here (as Node would, roughly), one
 * line per call sent to the host, which counts exact bytes and keeps up to
 * `maxLogBytes`; this side stops sending once past it.
 */

import { create, ErrorCtor, freeze, hostSend, isArray, jsonStringify, objectKeys, objectToString, reflectApply, StringCtor } from './builtins.ts';
import { logRef } from './host.ts';
import { IDENT } from './lossless-json.ts';
import { config } from './run-state.ts';

let logChars = 0;
/** Log messages sent (fire-and-forget); start() reports the count so the host can wait for all of them. */
export let logsSent = 0;
let logsClosed = false;

export const formatValue = ((value: unknown, depth: number, seen: object[]): string => {
  switch (typeof value) {
    case 'string':
      return depth === 0 ? value : jsonStringify(value);
    case 'number':
      return value === 0 && 1 / value < 0 ? '-0' : StringCtor(value);
    case 'bigint':
      return `${StringCtor(value)}n`;
    case 'undefined':
      return 'undefined';
    case 'symbol':
      return StringCtor(value);
    case 'function':
      return `[Function ${(value as { name?: string }).name || '(anonymous)'}]`;
    case 'boolean':
      return StringCtor(value);
  }
  if (value === null) return 'null';
  const object = value as object;
  if (value instanceof ErrorCtor) {
    const stack = (value as Error).stack;
    if (typeof stack !== 'string') return `${(value as Error).name}: ${(value as Error).message}`;
    return stack
      .split('\n')
      .filter((line) => !line.includes('ptc-bootstrap.js'))
      .join('\n');
  }
  for (let i = 0; i < seen.length; i++) if (seen[i] === object) return '[Circular]';
  const tag = reflectApply(objectToString, object, []) as string;
  if (tag === '[object Date]') return StringCtor(value);
  if (depth >= 4) return isArray(value) ? '[Array]' : '[Object]';
  seen.push(object);
  try {
    if (isArray(value)) {
      const parts: string[] = [];
      const length = value.length;
      for (let i = 0; i < length && i < 100; i++) parts.push(formatValue(value[i], depth + 1, seen));
      if (length > 100) parts.push(`... ${length - 100} more items`);
      return parts.length === 0 ? '[]' : `[ ${parts.join(', ')} ]`;
    }
    const keys = objectKeys(object);
    const parts: string[] = [];
    for (let i = 0; i < keys.length && i < 100; i++) {
      const key = keys[i];
      parts.push(`${IDENT.test(key) ? key : jsonStringify(key)}: ${formatValue((object as Record<string, unknown>)[key], depth + 1, seen)}`);
    }
    if (keys.length > 100) parts.push(`... ${keys.length - 100} more keys`);
    const prefix = tag === '[object Object]' ? '' : `${tag.slice(8, -1)} `;
    return parts.length === 0 ? `${prefix}{}` : `${prefix}{ ${parts.join(', ')} }`;
  } finally {
    seen.pop();
  }
});
const emit = ((level: string, args: unknown[]): void => {
  if (logsClosed) return;
  let line: string;
  try {
    const parts: string[] = [];
    for (let i = 0; i < args.length; i++) parts.push(formatValue(args[i], 0, []));
    line = parts.join(' ');
  } catch {
    line = '[a value that could not be formatted]';
  }
  if (level === 'warn' || level === 'error') line = `[${level}] ${line}`;
  // Host counts exact bytes; this cheaper count (chars <= bytes) only stops a flood early.
  if (line.length > config.maxLogBytes) line = line.slice(0, config.maxLogBytes + 1);
  logChars += line.length;
  if (logChars > config.maxLogBytes) logsClosed = true;
  logsSent++;
  hostSend(logRef, [level, line]);
});
/** A runtime note (level `notice`): bypasses the cap, the host shows it whatever the program logged. */
export const notice = ((text: string): void => {
  logsSent++;
  hostSend(logRef, ['notice', text]);
});
export const consoleObject = create(null) as Record<string, unknown>;
for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
  consoleObject[level] = (function (...args: unknown[]): void {
    emit(level, args);
  });
}
freeze(consoleObject);
