/**
 * A nested call's value handed on a slice at a time while the host copies it: the consumer (a
 * program's sandbox) parses one slice of a big array (the value, or a member of it) while the host
 * copies the next, instead of waiting for the whole copy and its text. Internal to the library:
 * code mode's scheduler asks for it on a dispatch request; the body's output projection
 * (project-output.ts) hands out the chunks (json.ts, snapshotFrozenJsonInChunks); the value then
 * says how many went, and which member they make. A value that did not go in chunks (no big
 * array, or replaced afterwards by a hook) goes whole, as its text.
 */
import type { ChunkedSnapshot, ChunkShape, FrozenJson, JsonValue } from './json.ts';
import type { DispatchRequest } from './tool.ts';

/** Takes the JSON text of one chunk (an array of the next slice of the value's elements) and its {@link ChunkShape}. */
export type ValueChunkSink = (json: string, shape: ChunkShape) => void;

// Every nested call of an in-process run asks, and most values are small: a property under a
// symbol of this module's own, not a WeakMap entry per call (an ephemeron the collector traces).
const SINK = Symbol('valueChunks');
type AskingRequest = DispatchRequest & { [SINK]?: ValueChunkSink };
/** Each chunked value: the sink its chunks went to, how many, and the member they make, if not the whole value. */
const counts = new WeakMap<object, { sink: ValueChunkSink; chunks: number; member: ChunkedSnapshot['member'] }>();

/** Asks for `request`'s value in chunks, handed to `sink` (when it is a big array, or an object holding one). */
export function requestValueChunks(request: DispatchRequest, sink: ValueChunkSink): void {
  (request as AskingRequest)[SINK] = sink;
}

/** The sink `request` asked for, if any. */
export function valueChunkSink(request: DispatchRequest): ValueChunkSink | undefined {
  return (request as AskingRequest)[SINK];
}

/** Records that `snapshot`'s value went as its chunks to `sink`. */
export function markChunked(snapshot: ChunkedSnapshot, sink: ValueChunkSink): void {
  const { value, chunks, member } = snapshot;
  if (chunks > 0 && typeof value === 'object' && value !== null) counts.set(value, { sink, chunks, member });
}

/**
 * How `value` went to `sink`: its chunks (the value, or `member`: the value is then `frameJson` with
 * the `null` at `path` replaced by the chunks joined), or undefined when it goes whole. Only to the sink
 * of the call it was made for: the same frozen value reaching another call (a hook's cache, say)
 * goes whole there, whose sink got nothing.
 */
export function chunkedValueOf(value: FrozenJson<JsonValue> | JsonValue, sink: ValueChunkSink | undefined): Omit<ChunkedSnapshot, 'value'> | undefined {
  if (sink === undefined || typeof value !== 'object' || value === null) return undefined;
  const marked = counts.get(value);
  return marked !== undefined && marked.sink === sink ? { chunks: marked.chunks, member: marked.member } : undefined;
}
