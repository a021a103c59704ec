/**
 * Type-checks a program body against the generated typings with the
 * TypeScript 5 compiler API, before anything runs. Every file is virtual:
 * TypeScript's own ES2023 lib files are read once per process and joined into
 * one parsed lib (one file merges into the globals without cloning symbols),
 * and a warm check reuses the previous program's source files.
 *
 * Most of a check is fixed cost: a new program and its type checker, which
 * merges the lib's globals and resolves the lib types the program touches
 * (most of a short program's check). `checkMany` checks several programs
 * in one program, each its own module, so they share that cost
 * (bench/RESULTS.md). A program that breaks out of its
 * wrapper function (`} declare global { ... } {`) could change what the
 * others see; it is checked on its own.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type ts from 'typescript';
import type { TypecheckDiagnostic } from '../src/code-mode/typings-service.ts';
import { AMBIENT_GLOBALS } from './ambient.ts';

export interface TypecheckerOptions {
  /** Diagnostics returned per check; the rest are dropped. Default 20. */
  maxDiagnostics?: number;
  /** Characters of one diagnostic message; longer ones end in `…`. Default 2,000. */
  maxMessageLength?: number;
}

export interface Typechecker {
  /**
   * Diagnostics of `code` (a program body) against `typings`, in the model's own line:column; [] when clean.
   * Rejects when the compiler itself fails. It runs on the calling thread: the service runs it in
   * worker threads under a time and memory budget (typecheck-pool.ts).
   */
  check(code: string, typings: string): Promise<TypecheckDiagnostic[]>;
  /**
   * The diagnostics of each of `codes`, in order, as `check` gives them, from one program where
   * they can share it. Rejects, for all of them, when the compiler itself fails on any.
   */
  checkMany(codes: readonly string[], typings: string): Promise<TypecheckDiagnostic[][]>;
}

type TypeScript = typeof ts;

const ROOT = '/ptc/';
const LIB_FILE = `${ROOT}lib.es2023.d.ts`;
const TYPINGS_FILE = `${ROOT}typings.d.ts`;
const GLOBALS_FILE = `${ROOT}globals.d.ts`;
const PROGRAM_FILE = `${ROOT}agent.ts`;
/** The model's code is the body of this function: one line above it, so wrapper line N + 1 is the model's line N. */
const WRAPPER_HEAD = 'async function __run() {\n';
const WRAPPER_TAIL = '\n}\n';
/** The same, then an empty export: a module, whose names stay its own when programs share a check. */
const MODULE_TAIL = '\n}\nexport {};\n';
/** "Cannot find name 'x'. Do you need to install type definitions for node / change your lib?" */
const MISSING_GLOBAL_CODES = new Set([2580, 2581, 2582, 2583, 2584, 2591, 2592, 2593]);

/** The ES library the sandbox offers; its `/// <reference lib>` closure is bundled. */
const LIB_ROOT = 'es2023';

let typescript: TypeScript | undefined;
let bundledLib: ts.SourceFile | undefined;

/**
 * Loaded on first check, through `require`: importing this 9 MB CommonJS
 * module from ESM would first scan it for named exports.
 */
function loadTypeScript(): TypeScript {
  typescript ??= createRequire(import.meta.url)('typescript') as TypeScript;
  return typescript;
}

/** The lib closure of {@link LIB_ROOT}, referenced files first, as one parsed file shared by every checker. */
function libFile(ts: TypeScript): ts.SourceFile {
  if (bundledLib) return bundledLib;
  const libDir = dirname(ts.getDefaultLibFilePath({}));
  const seen = new Set<string>();
  const parts: string[] = [];
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const text = readFileSync(join(libDir, `lib.${name}.d.ts`), 'utf8');
    for (const match of text.matchAll(/^\/\/\/ <reference lib="([\w.]+)" \/>/gm)) visit(match[1]);
    parts.push(text.replace(/^\/\/\/ <reference .*$/gm, ''));
  };
  visit(LIB_ROOT);
  bundledLib = ts.createSourceFile(LIB_FILE, `/// <reference no-default-lib="true"/>\n${parts.join('\n')}`, ts.ScriptTarget.ES2023, false);
  return bundledLib;
}

export function createTypechecker(options: TypecheckerOptions = {}): Typechecker {
  const maxDiagnostics = options.maxDiagnostics ?? 20;
  const maxMessageLength = options.maxMessageLength ?? 2_000;
  let state: { ts: TypeScript; compilerOptions: ts.CompilerOptions; lib: ts.SourceFile; globals: ts.SourceFile } | undefined;
  let typingsFile: ts.SourceFile | undefined;
  let oldProgram: ts.Program | undefined;

  function init() {
    if (state) return state;
    const ts = loadTypeScript();
    const compilerOptions: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2023,
      // The bundled lib is a root file instead.
      noLib: true,
      types: [],
      noEmit: true,
      noResolve: true,
      strict: true,
      // Model-written JavaScript is fine as it is: only errors that would fail at run time.
      noImplicitAny: false,
      useUnknownInCatchVariables: false,
      // The sandbox strips types, it does not transpile: enums and namespaces would not run.
      erasableSyntaxOnly: true,
      skipLibCheck: true,
      skipDefaultLibCheck: true,
    };
    const globals = ts.createSourceFile(GLOBALS_FILE, AMBIENT_GLOBALS, ts.ScriptTarget.ES2023, false);
    state = { ts, compilerOptions, lib: libFile(ts), globals };
    return state;
  }

  /** Checks `programs` (each a program body and its parsed file) in one program over the shared files. */
  function diagnose(programs: readonly { code: string; file: ts.SourceFile }[], typings: string): TypecheckDiagnostic[][] {
    const { ts, compilerOptions, lib, globals } = init();
    if (typingsFile?.text !== typings) typingsFile = ts.createSourceFile(TYPINGS_FILE, typings, ts.ScriptTarget.ES2023, false);
    const virtual = new Map([
      [LIB_FILE, lib],
      [TYPINGS_FILE, typingsFile],
      [GLOBALS_FILE, globals],
      ...programs.map(({ file }): [string, ts.SourceFile] => [file.fileName, file]),
    ]);
    const program = ts.createProgram({ rootNames: [...virtual.keys()], options: compilerOptions, host: compilerHost(virtual), oldProgram });
    oldProgram = program;
    return programs.map(({ code, file }) => {
      // Type errors in code that does not parse are mostly noise: report the syntax first.
      const syntactic = program.getSyntacticDiagnostics(file);
      const found = syntactic.length > 0 ? syntactic : program.getSemanticDiagnostics(file);
      return found
        .filter((d) => d.category === ts.DiagnosticCategory.Error && d.file === file)
        .slice(0, maxDiagnostics)
        .map((d) => toModelPosition(ts, d, file, code, maxMessageLength));
    });
  }

  function parse(code: string, fileName: string, tail: string): ts.SourceFile {
    const { ts } = init();
    return ts.createSourceFile(fileName, WRAPPER_HEAD + code + tail, ts.ScriptTarget.ES2023, false);
  }

  function diagnoseMany(codes: readonly string[], typings: string): TypecheckDiagnostic[][] {
    if (codes.length === 1) return diagnose([{ code: codes[0], file: parse(codes[0], PROGRAM_FILE, WRAPPER_TAIL) }], typings);
    const results: TypecheckDiagnostic[][] = new Array(codes.length);
    const together: { code: string; file: ts.SourceFile; at: number }[] = [];
    codes.forEach((code, at) => {
      const file = parse(code, `${ROOT}agent-${at}.ts`, MODULE_TAIL);
      if (wrapperIntact(init().ts, file, code)) together.push({ code, file, at });
      else [results[at]] = diagnose([{ code, file: parse(code, PROGRAM_FILE, WRAPPER_TAIL) }], typings);
    });
    if (together.length > 0) diagnose(together, typings).forEach((found, i) => (results[together[i].at] = found));
    return results;
  }

  const checkMany = async (codes: readonly string[], typings: string): Promise<TypecheckDiagnostic[][]> => {
    try {
      return diagnoseMany(codes, typings);
    } catch (error) {
      // The compiler itself failed (a stack overflow on absurdly nested code, `Map maximum size
      // exceeded` on exploding types …). The programs were not checked: say so, never pass them as
      // clean. The next check starts from scratch, in case the failure left the old program half-built.
      oldProgram = undefined;
      throw error;
    }
  };
  return {
    checkMany,
    async check(code, typings) {
      return (await checkMany([code], typings))[0];
    },
  };
}

/**
 * Whether the program stayed inside its wrapper: the module holds exactly the wrapper function,
 * ending at the wrapper's own closing brace, and the empty export. A module's only way to change
 * what other files see, `declare global`, is a statement at its top level.
 */
function wrapperIntact(ts: TypeScript, file: ts.SourceFile, code: string): boolean {
  const [wrapper, ...rest] = file.statements;
  return (
    rest.length === 1 &&
    ts.isExportDeclaration(rest[0]) &&
    wrapper !== undefined &&
    ts.isFunctionDeclaration(wrapper) &&
    wrapper.end === WRAPPER_HEAD.length + code.length + 2
  );
}

/** Serves the virtual files and nothing else: no path the program names is ever read. */
function compilerHost(virtual: Map<string, ts.SourceFile>): ts.CompilerHost {
  return {
    getSourceFile: (fileName) => virtual.get(fileName),
    getDefaultLibFileName: () => LIB_FILE,
    getDefaultLibLocation: () => ROOT,
    fileExists: (fileName) => virtual.has(fileName),
    readFile: (fileName) => virtual.get(fileName)?.text,
    directoryExists: (name) => name === ROOT || name === ROOT.slice(0, -1),
    getDirectories: () => [],
    writeFile: () => {},
    getCurrentDirectory: () => ROOT,
    getCanonicalFileName: (fileName) => fileName,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => '\n',
  };
}

function toModelPosition(
  ts: TypeScript,
  diagnostic: ts.Diagnostic,
  file: ts.SourceFile,
  code: string,
  maxMessageLength: number,
): TypecheckDiagnostic {
  const at = file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
  const lines = code.split('\n');
  let line = at.line;
  let column = at.character + 1;
  if (line < 1) {
    line = 1;
    column = 1;
  } else if (line > lines.length) {
    line = lines.length;
    column = lines[line - 1].length + 1;
  }
  let message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  if (MISSING_GLOBAL_CODES.has(diagnostic.code)) {
    // TypeScript suggests installing Node or DOM typings: wrong advice for a sandbox that has neither.
    const name = /'([^']*)'/.exec(message)?.[1] ?? '';
    message = `Cannot find name '${name}': the sandbox has no such global (no Node.js or browser APIs; use the tools).`;
  }
  if (message.length > maxMessageLength) message = `${message.slice(0, maxMessageLength)}…`;
  return { line, column, code: diagnostic.code, message };
}
