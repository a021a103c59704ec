/**
 * `grep`: lines matching a JavaScript regular expression, in one file or
 * every file below a directory. Skips binary files, files over the size
 * limit, ignored directories, and symbolic links leading outside the
 * workspace. A pathological pattern can still run long on one line: the
 * regex engine cannot be interrupted, the signal is checked between files
 * and between 1,000-line blocks.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import picomatch from 'picomatch';
import { textContent } from '../content.ts';
import { defineTool } from '../define-tool.ts';
import type { ParameterSchemaSpec, ValueSchemaSpec } from '../schema/types.ts';
import { WORKSPACE_PATH_PROPERTY, type ToolContext } from './context.ts';
import { renderPage } from './paging.ts';
import { looksBinary, truncateLine } from './text-file.ts';
import { walkFiles } from './walk.ts';
import { WorkspaceError } from './workspace-error.ts';

interface Match {
  path: string;
  lineNumber: number;
  line: string;
}

export function createGrepTool({ workspace, limits, ignoreDirectories }: ToolContext) {
  const parameters = {
    pattern: { type: 'string', required: true, description: 'JavaScript regular expression source, such as "function\\s+\\w+".' },
    path: { type: 'string', description: 'File or directory to search, relative to the workspace root. Default: the root.' },
    glob: { type: 'string', description: 'Only search files matching this glob (such as "*.ts"; without a slash it matches file names).' },
    ignoreCase: { type: 'boolean', description: 'Match case-insensitively. Default false.' },
  } as const satisfies ParameterSchemaSpec;
  const valueSchema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      matches: {
        type: 'array',
        required: true,
        description: "In walk order: a directory's files by name, then its subdirectories; lines in file order.",
        items: {
          type: 'object',
          additionalProperties: false,
          properties: {
            path: WORKSPACE_PATH_PROPERTY,
            lineNumber: { type: 'integer', required: true, description: 'Line number, 1-based.' },
            line: { type: 'string', required: true, description: 'The matching line, without its line ending.' },
          },
        },
      },
    },
  } as const satisfies ValueSchemaSpec;
  return defineTool({
    name: 'grep',
    description:
      'Search file contents with a JavaScript regular expression; returns matching lines as path:line:text. ' +
      `Searches a file or a directory tree (skipping binary files and ${[...ignoreDirectories].join(', ') || 'no directories'}); ` +
      `at most ${limits.maxResults} matches.`,
    parameters,
    output: {
      schema: valueSchema,
      render(_args, value) {
        if (value.matches.length === 0) return textContent('No matches found');
        return textContent(
          renderPage(
            value.matches.map((m) => `${m.path}:${m.lineNumber}:${m.line}`),
            { pageSize: limits.renderPageSize, cap: limits.maxResults, noun: 'matches', narrow: 'narrow the pattern, path or glob' },
          ),
        );
      },
    },
    isConcurrencySafe: () => true,
    async execute(args, exec) {
      let regex: RegExp;
      try {
        regex = new RegExp(args.pattern, args.ignoreCase === true ? 'i' : '');
      } catch (error) {
        throw new WorkspaceError(
          'invalid-argument',
          `pattern is not a valid JavaScript regular expression (${(error as Error).message}): fix or escape it`,
        );
      }
      const filter = args.glob === undefined ? undefined : picomatch(args.glob, { dot: true, basename: true });
      const base = await workspace.resolveExisting(args.path ?? '.');
      const matches: Match[] = [];
      const search = async (absolute: string, display: string): Promise<boolean> => {
        const text = await readSearchable(absolute, limits.maxGrepFileBytes, exec.signal);
        if (text === undefined) return true;
        const lines = text.split('\n');
        if (lines[lines.length - 1] === '') lines.pop();
        for (let i = 0; i < lines.length; i++) {
          if (i % 1000 === 999) exec.signal.throwIfAborted();
          const line = lines[i].endsWith('\r') ? lines[i].slice(0, -1) : lines[i];
          if (!regex.test(line)) continue;
          matches.push({ path: display, lineNumber: i + 1, line: truncateLine(line, limits.maxLineChars) });
          if (matches.length >= limits.maxResults) return false;
        }
        return true;
      };

      if (!base.isDirectory) {
        await search(base.absolute, base.display);
        return { matches };
      }
      for await (const entry of walkFiles(base, { ignoreDirectories, signal: exec.signal })) {
        if (filter !== undefined && !filter(entry.relative)) continue;
        let absolute = entry.absolute;
        if (entry.isSymbolicLink) {
          const real = await realpath(entry.absolute).catch(() => undefined);
          if (real === undefined || !workspace.contains(real)) continue;
          absolute = real;
        }
        if (!(await search(absolute, entry.display))) break;
      }
      return { matches };
    },
  });
}

/** The file's text, or undefined when it is not a regular file, too large, binary or unreadable. */
async function readSearchable(absolute: string, maxBytes: number, signal: AbortSignal): Promise<string | undefined> {
  try {
    const info = await stat(absolute);
    if (!info.isFile() || info.size > maxBytes) return undefined;
    const bytes = await readFile(absolute, { signal });
    if (looksBinary(bytes)) return undefined;
    return bytes.toString('utf8');
  } catch (error) {
    if (error instanceof Error && error.name === 'AbortError') throw error;
    return undefined;
  }
}
