/**
 * `glob`: files whose path (relative to `path`) matches a picomatch pattern.
 * Dotfiles match like any file; `.git` and `node_modules` (configurable) are
 * never entered; symbolic links are listed but not followed; FIFOs, sockets
 * and devices are not listed. Only the part of the tree below the pattern's
 * literal prefix is walked. The pattern is capped before compiling and
 * matched in a worker thread (search-jobs.ts) under the search time limit.
 */
import picomatch from 'picomatch';
import { textContent } from '../content.ts';
import { defineTool } from '../define-tool.ts';
import type { ParameterSchemaSpec, ValueSchemaSpec } from '../schema/types.ts';
import type { ToolContext } from './context.ts';
import { skippedDirectories } from './describe.ts';
import { renderPage } from './paging.ts';
import { checkGlobPattern } from './pattern-caps.ts';
import type { GlobJob } from './search-jobs.ts';
import { WorkspaceError } from './workspace-error.ts';

export function createGlobTool({ workspace, limits, ignoreDirectories, search }: ToolContext) {
  const parameters = {
    pattern: { type: 'string', required: true },
    path: { type: 'string' },
  } as const satisfies ParameterSchemaSpec;
  const valueSchema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      paths: {
        type: 'array',
        required: true,
        items: { type: 'string' },
      },
    },
  } as const satisfies ValueSchemaSpec;
  return defineTool({
    name: 'glob',
    description:
      'Files below path matching pattern (e.g. "src/**/*.ts"), ' +
      `as sorted workspace-relative paths; at most ${limits.maxResults}.${skippedDirectories(ignoreDirectories)}`,
    parameters,
    output: {
      schema: valueSchema,
      render(_args, value) {
        if (value.paths.length === 0) return textContent('No files found');
        return textContent(
          renderPage(value.paths, {
            pageSize: limits.renderPageSize,
            cap: limits.maxResults,
            noun: 'files',
            narrow: 'narrow the pattern or path',
          }),
        );
      },
    },
    isConcurrencySafe: () => true,
    async execute(args, exec) {
      checkGlobPattern('pattern', args.pattern, limits);
      const pattern = args.pattern.replace(/^(\.\/)+/, '');
      if (pattern === '') throw new WorkspaceError('invalid-argument', 'pattern is empty: pass a glob such as "**/*.ts"');
      if (pattern.startsWith('/')) {
        throw new WorkspaceError('invalid-argument', `pattern "${args.pattern}" is absolute: pass a relative pattern and the directory as path`);
      }
      const base = await workspace.resolveExisting(args.path ?? '.');
      if (!base.isDirectory) throw new WorkspaceError('not-a-directory', `path "${base.display}" is a file: pass a directory (or use read)`);
      const join = (rel: string): string => (base.display === '.' ? rel : `${base.display}/${rel}`);

      const scanned = picomatch.scan(pattern);
      if (!scanned.isGlob) {
        const literal = await resolveOptional(workspace, join(pattern));
        return { paths: literal !== undefined && !literal.isDirectory ? [literal.display] : [] };
      }
      const start = scanned.base === '' ? base : await resolveOptional(workspace, join(scanned.base));
      if (start === undefined || !start.isDirectory) return { paths: [] };
      const prefix = scanned.base === '' ? '' : `${scanned.base}/`;
      const job: GlobJob = {
        kind: 'glob',
        root: workspace.root,
        start,
        prefix,
        pattern,
        ignoreDirectories: [...ignoreDirectories],
        maxResults: limits.maxResults,
      };
      const { paths } = (await search.run(job, exec.signal, { sessionId: exec.sessionId, runId: exec.rootCallId })) as { paths: string[] };
      return { paths };
    },
  });
}

/** An existing path, or undefined when missing; escapes still throw. */
async function resolveOptional(workspace: ToolContext['workspace'], input: string) {
  try {
    return await workspace.resolveExisting(input);
  } catch (error) {
    if (error instanceof WorkspaceError && error.reason === 'not-found') return undefined;
    throw error;
  }
}
