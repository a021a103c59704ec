import ts from 'typescript';

/**
 * Compiles virtual files with the real TypeScript compiler and its ES2023 lib
 * (independently of typings/typecheck.ts) and returns every error, formatted
 * `file:line:col TScode message`. Nothing is written to disk.
 */
/** Lib files parsed once per test file. */
const libs = new Map<string, ts.SourceFile | undefined>();

export function tscErrors(files: Record<string, string>): string[] {
  const options: ts.CompilerOptions = { target: ts.ScriptTarget.ES2023, lib: ['lib.es2023.d.ts'], types: [], strict: true, noEmit: true };
  const host = ts.createCompilerHost(options);
  const virtual = new Map(Object.entries(files).map(([name, text]) => [`/virtual/${name}`, text]));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, version, onError, fresh) => {
    const text = virtual.get(fileName);
    if (text !== undefined) return ts.createSourceFile(fileName, text, version);
    if (!libs.has(fileName)) libs.set(fileName, getSourceFile(fileName, version, onError, fresh));
    return libs.get(fileName);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => virtual.has(fileName) || fileExists(fileName);
  const program = ts.createProgram([...virtual.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    if (!d.file || d.start === undefined) return `TS${d.code} ${message}`;
    const at = d.file.getLineAndCharacterOfPosition(d.start);
    return `${d.file.fileName.replace('/virtual/', '')}:${at.line + 1}:${at.character + 1} TS${d.code} ${message}`;
  });
}
