/**
 * Turns the model's program (erasable TypeScript, the body of an async
 * function) into a function expression V8 can compile, positions preserved:
 * the wrapper sits alone on line 0, so compiling with `lineOffset: -1` makes
 * the model's line N line N in every stack trace and syntax error.
 */
import amaro from 'amaro';
import type { SandboxFailure } from '../src/sandbox-runtime.ts';

/**
 * Erases TypeScript types, positions preserved (types become spaces). amaro
 * is the stripper Node itself uses; called directly, it prints no
 * ExperimentalWarning and needs no patching of `process.emitWarning`.
 */
export function stripTypes(source: string): string {
  return amaro.transformSync(source, { mode: 'strip-only' }).code;
}

export type StripResult = { ok: true; js: string } | { ok: false; failure: SandboxFailure };

const PREFIX = "(async function () { 'use strict';\n";
const SUFFIX = '\n})';

/**
 * Recently stripped programs: an agent retrying a program, or a fleet of
 * clients sending the same one, skips the stripper (a wasm call, not
 * cheap even for two lines). Bounded in entries and in the size of what it keeps;
 * only successes are kept (a failure's message names the run's filename).
 */
const CACHE_ENTRIES = 64;
const CACHE_MAX_CHARS = 8 * 1024;
const stripped = new Map<string, string>();

export async function stripProgram(code: string, filename: string): Promise<StripResult> {
  const wrapped = `${PREFIX}${code}${SUFFIX}`;
  const cached = stripped.get(wrapped);
  if (cached !== undefined) {
    // Least recently used first: a hit moves to the end.
    stripped.delete(wrapped);
    stripped.set(wrapped, cached);
    return { ok: true, js: cached };
  }
  try {
    const js = stripTypes(wrapped);
    if (wrapped.length <= CACHE_MAX_CHARS) {
      if (stripped.size >= CACHE_ENTRIES) stripped.delete(stripped.keys().next().value as string);
      stripped.set(wrapped, js);
    }
    return { ok: true, js };
  } catch (error) {
    const codeOf = (error as { code?: unknown }).code;
    // amaro throws plain { code, message } objects, not Errors.
    const thrown = (error as { message?: unknown } | null)?.message;
    const reason = typeof thrown === 'string' ? thrown : String(error);
    const unsupported = codeOf === 'UnsupportedSyntax';
    const where = await locate(wrapped, unsupported);
    const at = where === undefined ? '' : ` (${filename}:${where.line}:${where.column})`;
    const message =
      unsupported
        ? `${reason}${at}: only erasable TypeScript runs here (type annotations, interfaces, generics, \`as\`, \`satisfies\`); use a union of string literals or a plain object instead of an enum, plain objects instead of namespaces, and ordinary fields instead of parameter properties`
        : `SyntaxError: ${where?.message ?? reason}${at}`;
    return { ok: false, failure: { kind: 'syntax', message, ...(where === undefined ? {} : { line: where.line, column: where.column }) } };
  }
}

interface Location {
  line: number;
  column: number;
  message?: string;
}

/**
 * The stripper reports no position, so the TypeScript parser (loaded only
 * on this failure path) finds one: the first parse diagnostic, or the first
 * non-erasable construct.
 */
async function locate(wrapped: string, unsupported: boolean): Promise<Location | undefined> {
  try {
    const ts = (await import('typescript')).default;
    const file = ts.createSourceFile('agent.ts', wrapped, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const toLocation = (pos: number, message?: string): Location => {
      const { line, character } = file.getLineAndCharacterOfPosition(pos);
      return { line, column: character + 1, ...(message === undefined ? {} : { message }) };
    };
    if (!unsupported) {
      const diagnostics = (file as unknown as { parseDiagnostics?: { start?: number; messageText: unknown }[] }).parseDiagnostics ?? [];
      const first = diagnostics[0];
      if (first?.start === undefined) return undefined;
      return toLocation(first.start, ts.flattenDiagnosticMessageText(first.messageText as string, ' '));
    }
    let found: number | undefined;
    const visit = (node: import('typescript').Node): void => {
      if (found !== undefined) return;
      const isParameterProperty = ts.isParameter(node) && ts.getCombinedModifierFlags(node) !== ts.ModifierFlags.None;
      if (ts.isEnumDeclaration(node) || ts.isModuleDeclaration(node) || ts.isImportEqualsDeclaration(node) || isParameterProperty) {
        found = node.getStart(file);
        return;
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
    return found === undefined ? undefined : toLocation(found);
  } catch {
    return undefined;
  }
}
