/**
 * `write`: create or replace a whole text file; missing parent directories
 * (inside the workspace) are created. Exclusive: never overlaps other calls.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { textContent } from '../content.ts';
import { defineTool } from '../define-tool.ts';
import type { ParameterSchemaSpec, ValueSchemaSpec } from '../schema/types.ts';
import { FILE_PATH_PARAMETER, WORKSPACE_PATH_PROPERTY, type ToolContext } from './context.ts';
import { diffHunks } from './diff-hunks.ts';
import { assertDiskRoom, countLines, readTextFile, tooLarge, writeTextFile } from './text-file.ts';
import { fsFailure } from './workspace-error.ts';

export function createWriteTool({ workspace, limits }: ToolContext) {
  const parameters = {
    file_path: FILE_PATH_PARAMETER,
    content: { type: 'string', required: true },
  } as const satisfies ParameterSchemaSpec;
  const valueSchema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      path: WORKSPACE_PATH_PROPERTY,
      operation: { type: 'string', enum: ['create', 'update'], required: true },
      before: { oneOf: [{ type: 'string' }, { type: 'null' }], required: true },
      after: { type: 'string', required: true },
    },
  } as const satisfies ValueSchemaSpec;
  return defineTool({
    name: 'write',
    description: 'Create or overwrite a text file (parent directories too). For part of a file, prefer edit.',
    parameters,
    output: {
      schema: valueSchema,
      render(_args, value) {
        return textContent(
          value.operation === 'create'
            ? `Created ${value.path} (${countLines(value.after)} lines)`
            : `Updated ${value.path} (${countLines(value.after)} lines)`,
        );
      },
      presentationMeta: (_args, value) => diffHunks(value.before ?? '', value.after),
    },
    async execute(args, exec) {
      const target = await workspace.resolveForWrite(args.file_path);
      const size = Buffer.byteLength(args.content, 'utf8');
      if (size > limits.maxEditBytes) throw tooLarge(target.display, size, limits.maxEditBytes);
      const before = target.exists ? await readTextFile(target.absolute, target.display, limits.maxEditBytes, exec.signal) : null;
      await assertDiskRoom(workspace.root, target.display, size, limits.minFreeDiskMiB);
      try {
        if (!target.exists) await mkdir(path.dirname(target.absolute), { recursive: true });
      } catch (error) {
        throw fsFailure(error, target.display, 'write');
      }
      await writeTextFile(target.absolute, target.display, args.content, exec.signal);
      return {
        path: target.display,
        operation: before === null ? ('create' as const) : ('update' as const),
        before,
        after: args.content,
      };
    },
  });
}
