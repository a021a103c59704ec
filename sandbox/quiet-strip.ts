/**
 * `stripTypeScriptTypes` (mode strip) without its one-time
 * ExperimentalWarning: the API is what Node's own type stripping uses, and a
 * warning on every service start or `ptc run` would only alarm users.
 */
import { stripTypeScriptTypes } from 'node:module';

let warned = false;

export function stripTypes(source: string): string {
  if (warned) return stripTypeScriptTypes(source, { mode: 'strip' });
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.includes('stripTypeScriptTypes')) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return stripTypeScriptTypes(source, { mode: 'strip' });
  } finally {
    process.emitWarning = emitWarning;
    warned = true;
  }
}
