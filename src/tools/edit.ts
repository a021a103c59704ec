/**
 * `edit`: exact string replacement in an existing text file. `old_string`
 * must occur exactly once unless `replace_all` is set; replacement text is
 * literal (no `$&`-style patterns). Exclusive: never overlaps other calls.
 */
import { textContent } from '../content.ts';
import { defineTool } from '../define-tool.ts';
import type { ParameterSchemaSpec, ValueSchemaSpec } from '../schema/types.ts';
import { FILE_PATH_PARAMETER, WORKSPACE_PATH_PROPERTY, type ToolContext } from './context.ts';
import { diffHunks } from './diff-hunks.ts';
import { assertDiskRoom, readTextFile, tooLarge, writeTextFile } from './text-file.ts';
import { WorkspaceError } from './workspace-error.ts';

export function createEditTool({ workspace, limits }: ToolContext) {
  const parameters = {
    file_path: FILE_PATH_PARAMETER,
    old_string: { type: 'string', required: true },
    new_string: { type: 'string', required: true },
    replace_all: { type: 'boolean' },
  } as const satisfies ParameterSchemaSpec;
  const valueSchema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      path: WORKSPACE_PATH_PROPERTY,
      before: { type: 'string', required: true },
      after: { type: 'string', required: true },
    },
  } as const satisfies ValueSchemaSpec;
  return defineTool({
    name: 'edit',
    description:
      'Replace old_string (exact, not empty) by a different new_string in a file; it must occur once unless replace_all.',
    parameters,
    output: {
      schema: valueSchema,
      render(args, value) {
        const count = args.replace_all === true ? locate(value.before, args.old_string, args.new_string).count : 1;
        return textContent(count === 1 ? `Edited ${value.path}` : `Edited ${value.path} (${count} replacements)`);
      },
      presentationMeta: (_args, value) => diffHunks(value.before, value.after),
    },
    async execute(args, exec) {
      if (args.old_string === '') {
        throw new WorkspaceError('invalid-argument', 'old_string is empty: pass the exact text to replace (use write to create a file)');
      }
      if (args.old_string === args.new_string) {
        throw new WorkspaceError('invalid-argument', 'old_string and new_string are the same: nothing would change');
      }
      const target = await workspace.resolveExisting(args.file_path);
      if (target.isDirectory) throw new WorkspaceError('not-a-file', `"${target.display}" is a directory: pass a file path`);
      const before = await readTextFile(target.absolute, target.display, limits.maxEditBytes, exec.signal);
      const { count, oldString, newString } = locate(before, args.old_string, args.new_string);
      if (count === 0) {
        throw new WorkspaceError(
          'no-match',
          `old_string was not found in "${target.display}": it must match the file exactly, whitespace and line breaks included (read the file first)`,
        );
      }
      if (count > 1 && args.replace_all !== true) {
        throw new WorkspaceError(
          'ambiguous-match',
          `old_string occurs ${count} times in "${target.display}": include more surrounding lines to make it unique, or pass replace_all: true to replace all ${count}`,
        );
      }
      const after = replaceLiteral(before, oldString, newString, args.replace_all === true);
      const size = Buffer.byteLength(after, 'utf8');
      if (size > limits.maxEditBytes) throw tooLarge(target.display, size, limits.maxEditBytes);
      await assertDiskRoom(workspace.root, target.display, size - Buffer.byteLength(before, 'utf8'), limits.minFreeDiskMiB);
      await writeTextFile(target.absolute, target.display, after, exec.signal);
      return { path: target.display, before, after };
    },
  });
}

/**
 * The strings to replace with, and how often the old one occurs. read shows
 * lines without their `\r`, so a model copying lines of a CRLF file writes
 * LF: when the LF form does not occur in a CRLF file, the CRLF form of both
 * strings is used instead.
 */
function locate(text: string, oldString: string, newString: string): { count: number; oldString: string; newString: string } {
  const count = countOccurrences(text, oldString);
  if (count > 0 || !text.includes('\r\n') || !/(^|[^\r])\n/.test(oldString)) return { count, oldString, newString };
  const crlf = (s: string): string => s.replace(/\r?\n/g, '\r\n');
  return { count: countOccurrences(text, crlf(oldString)), oldString: crlf(oldString), newString: crlf(newString) };
}

/** Non-overlapping occurrences, scanning left to right (as the replacement does). */
export function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

function replaceLiteral(text: string, needle: string, replacement: string, all: boolean): string {
  let out = '';
  let from = 0;
  for (let i = text.indexOf(needle); i !== -1; i = all ? text.indexOf(needle, from) : -1) {
    out += text.slice(from, i) + replacement;
    from = i + needle.length;
  }
  return out + text.slice(from);
}
