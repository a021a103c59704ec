/**
 * `grep`: lines matching a JavaScript regular expression, in one file or
 * every file below a directory. Skips binary files, files over the size
 * limit, special files, ignored directories, and symbolic links leading
 * outside the workspace. The pattern (and glob) are capped before compiling;
 * the search itself runs in a worker thread (search-jobs.ts), on RE2 in
 * linear time where the pattern allows (linear-regex.ts), so only a pattern
 * RE2 cannot run (a backreference, a lookaround) can backtrack, and then it
 * holds a worker, not the host, until the search time limit or the caller's
 * signal terminates it.
 */
import { textContent } from '../content.ts';
import { defineTool } from '../define-tool.ts';
import type { ParameterSchemaSpec, ValueSchemaSpec } from '../schema/types.ts';
import { WORKSPACE_PATH_PROPERTY, type ToolContext } from './context.ts';
import { byteSize } from './describe.ts';
import { renderPage } from './paging.ts';
import { checkGlobPattern, checkRegexPattern } from './pattern-caps.ts';
import type { GrepJob, GrepMatch } from './search-jobs.ts';

export function createGrepTool({ workspace, limits, ignoreDirectories, search }: ToolContext) {
  const parameters = {
    pattern: { type: 'string', required: true },
    path: { type: 'string' },
    glob: { type: 'string', description: 'Filter, e.g. "*.ts" (no slash: matches names).' },
    ignoreCase: { type: 'boolean' },
  } as const satisfies ParameterSchemaSpec;
  const valueSchema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      matches: {
        type: 'array',
        required: true,
        items: {
          type: 'object',
          additionalProperties: false,
          properties: {
            path: WORKSPACE_PATH_PROPERTY,
            lineNumber: { type: 'integer', required: true },
            line: { type: 'string', required: true },
          },
        },
      },
    },
  } as const satisfies ValueSchemaSpec;
  return defineTool({
    name: 'grep',
    description:
      'Search file contents for lines matching pattern (JS regular expression, e.g. "def\\s+\\w+") in path (a file or tree); ' +
      `at most ${limits.maxResults}, files before subdirectories. ` +
      `Skips binary files, files over ${byteSize(limits.maxGrepFileBytes)}${ignoreDirectories.size > 0 ? `, ${[...ignoreDirectories].join(', ')}` : ''}; ` +
      `cuts lines at ${limits.maxLineChars} chars.`,
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
      const flags = args.ignoreCase === true ? 'i' : '';
      checkRegexPattern(args.pattern, flags, limits);
      if (args.glob !== undefined) checkGlobPattern('glob', args.glob, limits);
      const base = await workspace.resolveExisting(args.path ?? '.');
      const job: GrepJob = {
        kind: 'grep',
        root: workspace.root,
        base,
        pattern: args.pattern,
        flags,
        ignoreDirectories: [...ignoreDirectories],
        maxResults: limits.maxResults,
        maxGrepFileBytes: limits.maxGrepFileBytes,
        maxLineChars: limits.maxLineChars,
      };
      if (args.glob !== undefined) job.glob = args.glob;
      return (await search.run(job, exec.signal, { sessionId: exec.sessionId, runId: exec.rootCallId })) as { matches: GrepMatch[] };
    },
  });
}
