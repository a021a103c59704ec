/**
 * The TypeScript language service, off the main thread. The program is the
 * body of an async function (as the sandbox runs it), so it is checked inside
 * a one-line wrapper, against the ES2023 lib, the service's console/timer
 * globals and the live typings; positions are mapped back to the editor's.
 */
import ts from 'typescript';
import { AMBIENT_GLOBALS } from '../../typings/ambient.ts';
import type { TsCompletion, TsCompletions, TsDiagnostic, TsRequest, TsResults, TsTooltip } from './ts-protocol.ts';

const LIB_DIR = '/lib/';
const PROGRAM = '/agent.ts';
const TYPINGS = '/typings.d.ts';
const GLOBALS = '/globals.d.ts';
const HEAD = 'async function __run() {\n';
const TAIL = '\n}\n';
/** Global completions list thousands of names; the list shows these many, best first. */
const MAX_ENTRIES = 300;
/** Member lists at most this long get their types fetched for the list itself. */
const DETAILED_ENTRIES = 40;

// The closure of lib.es2023.d.ts (no DOM: the sandbox has none).
const libSources = import.meta.glob(
  [
    '../../node_modules/typescript/lib/lib.es5.d.ts',
    '../../node_modules/typescript/lib/lib.es20{15,16,17,18,19,20,21,22,23}*.d.ts',
    '../../node_modules/typescript/lib/lib.decorators*.d.ts',
    '!**/*.full.d.ts',
  ],
  { query: '?raw', import: 'default', eager: true },
) as Record<string, string>;
const libs = new Map(Object.entries(libSources).map(([path, text]) => [LIB_DIR + path.slice(path.lastIndexOf('/') + 1), text]));

const files = new Map<string, { text: string; version: number }>([
  [TYPINGS, { text: '', version: 1 }],
  [GLOBALS, { text: AMBIENT_GLOBALS, version: 1 }],
  [PROGRAM, { text: HEAD + TAIL, version: 1 }],
]);
const snapshots = new Map<string, ts.IScriptSnapshot>();

const options: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2023,
  lib: ['lib.es2023.d.ts'],
  types: [],
  noEmit: true,
  strict: true,
  // As the service's own type-check (typings/typecheck.ts): only errors that would fail at run time.
  noImplicitAny: false,
  useUnknownInCatchVariables: false,
  erasableSyntaxOnly: true,
  skipLibCheck: true,
};

const readText = (file: string) => files.get(file)?.text ?? libs.get(file);

const host: ts.LanguageServiceHost = {
  getCompilationSettings: () => options,
  getScriptFileNames: () => [TYPINGS, GLOBALS, PROGRAM],
  getScriptVersion: (file) => String(files.get(file)?.version ?? 0),
  getScriptSnapshot(file) {
    const entry = files.get(file);
    const key = `${file}@${entry?.version ?? 0}`;
    let snapshot = snapshots.get(key);
    if (snapshot === undefined) {
      const text = readText(file);
      if (text === undefined) return undefined;
      snapshot = ts.ScriptSnapshot.fromString(text);
      if (entry === undefined) snapshots.set(key, snapshot);
    }
    return snapshot;
  },
  getCurrentDirectory: () => '/',
  getDefaultLibFileName: () => `${LIB_DIR}lib.es2023.d.ts`,
  fileExists: (file) => readText(file) !== undefined,
  readFile: readText,
};
const service = ts.createLanguageService(host, ts.createDocumentRegistry());

function setFile(file: string, text: string): void {
  const entry = files.get(file);
  if (entry !== undefined && entry.text !== text) files.set(file, { text, version: entry.version + 1 });
}

/** Loads the program and returns the offset of its first character in the wrapper file. */
function load(code: string): number {
  setFile(PROGRAM, HEAD + code + TAIL);
  return HEAD.length;
}

const clamp = (n: number, max: number) => Math.max(0, Math.min(n, max));

function completions(code: string, pos: number): TsCompletions | null {
  const offset = load(code);
  const info = service.getCompletionsAtPosition(PROGRAM, pos + offset, { includeCompletionsWithInsertText: true });
  if (info === undefined) return null;
  const sorted = [...info.entries].sort((a, b) => (a.sortText < b.sortText ? -1 : a.sortText > b.sortText ? 1 : a.name.localeCompare(b.name)));
  const detailed = info.isMemberCompletion || sorted.length <= DETAILED_ENTRIES;
  const entries = sorted.slice(0, MAX_ENTRIES).map((entry, index): TsCompletion => {
    const item: TsCompletion = { name: entry.name, kind: entry.kind, sortText: entry.sortText };
    if (entry.insertText !== undefined) item.insertText = entry.insertText;
    if (detailed && index < DETAILED_ENTRIES) {
      const details = service.getCompletionEntryDetails(PROGRAM, pos + offset, entry.name, undefined, entry.source, undefined, entry.data);
      if (details !== undefined) {
        const declaration = ts.displayPartsToString(details.displayParts);
        const doc = ts.displayPartsToString(details.documentation);
        item.info = doc === '' ? declaration : `${declaration}\n\n${doc}`;
        const colon = declaration.indexOf(': ');
        if (colon >= 0) item.detail = declaration.slice(colon + 2);
      }
    }
    return item;
  });
  const span = info.optionalReplacementSpan;
  const from = span === undefined ? pos : clamp(span.start - offset, code.length);
  return { from, entries };
}

function diagnostics(code: string): TsDiagnostic[] {
  const offset = load(code);
  const syntactic = service.getSyntacticDiagnostics(PROGRAM);
  // Type errors in code that does not parse are mostly noise: the syntax first.
  const found: ts.Diagnostic[] = syntactic.length > 0 ? syntactic : service.getSemanticDiagnostics(PROGRAM);
  return found
    .filter((d) => d.category === ts.DiagnosticCategory.Error || d.category === ts.DiagnosticCategory.Warning)
    .map((d) => {
      const from = clamp((d.start ?? offset) - offset, code.length);
      return {
        from,
        to: clamp(from + (d.length ?? 0), code.length),
        message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
        severity: d.category === ts.DiagnosticCategory.Error ? 'error' : 'warning',
      };
    });
}

function quickInfo(code: string, pos: number): TsTooltip | null {
  const offset = load(code);
  const info = service.getQuickInfoAtPosition(PROGRAM, pos + offset);
  if (info === undefined) return null;
  const doc = ts.displayPartsToString(info.documentation);
  const text = ts.displayPartsToString(info.displayParts);
  const from = clamp(info.textSpan.start - offset, code.length);
  return { from, to: clamp(from + info.textSpan.length, code.length), text: doc === '' ? text : `${text}\n\n${doc}` };
}

/** The innermost call whose argument list holds `pos`. */
function callAt(node: ts.Node, pos: number): ts.CallExpression | undefined {
  let found: ts.CallExpression | undefined;
  const visit = (child: ts.Node): void => {
    if (pos < child.getStart() || pos > child.end) return;
    if (ts.isCallExpression(child) && pos > child.expression.end && pos < child.end) found = child;
    ts.forEachChild(child, visit);
  };
  ts.forEachChild(node, visit);
  return found;
}

/**
 * The signature of the call around the cursor, with each parameter's type
 * written out (`{ pattern: string; path?: string }`, not `ToolArgsMap["glob"]`).
 */
function signature(code: string, pos: number): TsTooltip | null {
  const offset = load(code);
  const program = service.getProgram();
  const file = program?.getSourceFile(PROGRAM);
  if (program === undefined || file === undefined) return null;
  const call = callAt(file, pos + offset);
  if (call === undefined) return null;
  const checker = program.getTypeChecker();
  const resolved = checker.getResolvedSignature(call);
  if (resolved === undefined) return null;
  const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType;
  const params = resolved.parameters.map((param) => {
    const type = checker.getTypeOfSymbolAtLocation(param, call);
    return `${param.name}: ${checker.typeToString(type, call, flags)}`;
  });
  const callee = call.expression.getText(file);
  const text = `${callee}(${params.join(', ')}): ${checker.typeToString(resolved.getReturnType(), call, flags)}`;
  const doc = ts.displayPartsToString(resolved.getDocumentationComment(checker));
  const from = clamp(call.getStart(file) - offset, code.length);
  return { from, to: clamp(call.end - offset, code.length), text: doc === '' ? text : `${text}\n\n${doc}` };
}

function handle(request: TsRequest): TsResults[TsRequest['op']] {
  switch (request.op) {
    case 'typings':
      setFile(TYPINGS, request.text);
      return null;
    case 'completions':
      return completions(request.code, request.pos);
    case 'diagnostics':
      return diagnostics(request.code);
    case 'quickInfo':
      return quickInfo(request.code, request.pos);
    case 'signature':
      return signature(request.code, request.pos);
  }
}

const scope = self as unknown as { onmessage: ((event: MessageEvent) => void) | null; postMessage(message: unknown): void };
scope.onmessage = (event: MessageEvent<{ id: number; request: TsRequest }>) => {
  const { id, request } = event.data;
  try {
    scope.postMessage({ id, result: handle(request) });
  } catch (error) {
    scope.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
};
