/**
 * `read`: one page of a text file as numbered lines. The file is streamed,
 * so memory stays bounded by the page whatever the file size; `totalLines`
 * still counts the whole file.
 */
import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { textContent } from '../content.ts';
import { defineTool } from '../define-tool.ts';
import type { ParameterSchemaSpec, ValueSchemaSpec } from '../schema/types.ts';
import { FILE_PATH_PARAMETER, WORKSPACE_PATH_PROPERTY, type ToolContext } from './context.ts';
import { BINARY_SNIFF_BYTES, binaryFileError, looksBinary, openRegularFile, truncatedMarker } from './text-file.ts';
import { WorkspaceError, fsFailure } from './workspace-error.ts';

export function createReadTool({ workspace, limits }: ToolContext) {
  const parameters = {
    file_path: FILE_PATH_PARAMETER,
    offset: { type: 'integer', description: 'First line, 1-based. Default 1.' },
    limit: { type: 'integer', description: `Default and max ${limits.readPageLines}.` },
  } as const satisfies ParameterSchemaSpec;
  const valueSchema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      path: WORKSPACE_PATH_PROPERTY,
      offset: { type: 'integer', required: true },
      lines: {
        type: 'array',
        required: true,
        items: {
          type: 'object',
          additionalProperties: false,
          properties: {
            number: { type: 'integer', required: true },
            text: { type: 'string', required: true, description: 'Without line ending.' },
          },
        },
      },
      totalLines: { type: 'integer', required: true },
    },
  } as const satisfies ValueSchemaSpec;
  return defineTool({
    name: 'read',
    description:
      `Numbered lines of a text file, at most ${limits.readPageLines} a call (page with offset). ` +
      `Cuts lines at ${limits.maxLineChars} chars; refuses binary files.`,
    parameters,
    output: {
      schema: valueSchema,
      render(_args, value) {
        if (value.totalLines === 0) return textContent(`(${value.path} is empty)`);
        if (value.lines.length === 0) {
          return textContent(`(offset ${value.offset} is past the end: ${value.path} has ${value.totalLines} lines)`);
        }
        let text = value.lines.map((line) => `${String(line.number).padStart(6)}\t${line.text}`).join('\n');
        const last = value.lines[value.lines.length - 1].number;
        if (last < value.totalLines) {
          text += `\n… ${value.totalLines - last} more lines; read with offset=${last + 1}`;
        }
        return textContent(text);
      },
    },
    isConcurrencySafe: () => true,
    async execute(args, exec) {
      const offset = args.offset ?? 1;
      if (offset < 0) throw new WorkspaceError('invalid-argument', `offset ${offset} is negative: pass a line number from 1`);
      const limit = args.limit ?? limits.readPageLines;
      if (limit < 1) throw new WorkspaceError('invalid-argument', `limit ${limit} reads nothing: pass at least 1 (or omit it)`);
      const target = await workspace.resolveExisting(args.file_path);
      if (target.isDirectory) {
        throw new WorkspaceError('not-a-file', `"${target.display}" is a directory: use glob to list its files`);
      }
      const first = Math.max(1, offset);
      const page = await readPage(target.absolute, target.display, first, Math.min(limit, limits.readPageLines), limits.maxLineChars, exec.signal);
      return { path: target.display, offset: first, lines: page.lines, totalLines: page.totalLines };
    },
  });
}

interface Page {
  lines: { number: number; text: string }[];
  totalLines: number;
}

const CHUNK_BYTES = 64 * 1024;

async function readPage(
  absolute: string,
  display: string,
  first: number,
  count: number,
  maxLineChars: number,
  signal: AbortSignal,
): Promise<Page> {
  const last = first + count - 1;
  const lines: Page['lines'] = [];
  let lineNumber = 1;
  let kept = '';
  let length = 0;
  let lastChar = '';

  const take = (chunk: string, from: number, to: number): void => {
    if (to === from) return;
    if (lineNumber >= first && lineNumber <= last && kept.length <= maxLineChars) {
      kept += chunk.slice(from, Math.min(to, from + maxLineChars + 1 - kept.length));
    }
    length += to - from;
    lastChar = chunk[to - 1];
  };
  const endLine = (): void => {
    if (lineNumber >= first && lineNumber <= last) {
      let full = length;
      let text = kept;
      if (lastChar === '\r') {
        full--;
        if (text.length > full) text = text.slice(0, full);
      }
      if (full > maxLineChars) text = truncatedMarker(text.slice(0, maxLineChars), full);
      lines.push({ number: lineNumber, text });
    }
    lineNumber++;
    kept = '';
    length = 0;
    lastChar = '';
  };
  const consume = (chunk: string): void => {
    let start = 0;
    for (let i = chunk.indexOf('\n'); i !== -1; i = chunk.indexOf('\n', start)) {
      take(chunk, start, i);
      endLine();
      start = i + 1;
    }
    take(chunk, start, chunk.length);
  };

  let handle: FileHandle;
  try {
    // resolveExisting already refused special files; this covers a swap since.
    handle = await openRegularFile(absolute, display, 'read');
  } catch (error) {
    throw fsFailure(error, display, 'read');
  }
  try {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    const decoder = new StringDecoder('utf8');
    let position = 0;
    for (;;) {
      signal.throwIfAborted();
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      if (position < BINARY_SNIFF_BYTES && looksBinary(buffer.subarray(0, Math.min(bytesRead, BINARY_SNIFF_BYTES - position)))) {
        throw binaryFileError(display);
      }
      position += bytesRead;
      consume(decoder.write(buffer.subarray(0, bytesRead)));
    }
    consume(decoder.end());
  } catch (error) {
    throw fsFailure(error, display, 'read');
  } finally {
    await handle.close();
  }
  if (length > 0) endLine();
  return { lines, totalLines: lineNumber - 1 };
}
