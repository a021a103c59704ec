/**
 * A nested call's value handed on a slice at a time while the host copies it: the consumer (a
 * program's sandbox) parses one slice of a big array while the host copies the next, instead of
 * waiting for the whole copy and its text. Internal to the library: code mode's scheduler asks for
 * it on a dispatch request; the body's output projection (project-output.ts) hands out the chunks
 * (json.ts, snapshotFrozenJsonInChunks); the value then says how many went. A value that did not go
 * in chunks (not a big array, or replaced afterwards by a hook) goes whole, as its text.
 */
import { JSON_CHUNK_ELEMENTS, type ChunkShape, type FrozenJson, type JsonValue } from './json.ts';
import type { DispatchRequest } from './tool.ts';

/** Takes the JSON text of one chunk (an array of the next slice of the value's elements) and its {@link ChunkShape}. */
export type ValueChunkSink = (json: string, shape: ChunkShape) => void;

// Every nested call of an in-process run asks, and most values are small: a property under a
// symbol of this module's own, not a WeakMap entry per call (an ephemeron the collector traces).
const SINK = Symbol('valueChunks');
type AskingRequest = DispatchRequest & { [SINK]?: ValueChunkSink };
/** Each chunked value: the sink its chunks went to, and how many. */
const counts = new WeakMap<object, { sink: ValueChunkSink; chunks: number }>();

/** Asks for `request`'s value in chunks, handed to `sink` (when it is a big array). */
export function requestValueChunks(request: DispatchRequest, sink: ValueChunkSink): void {
  (request as AskingRequest)[SINK] = sink;
}

/** The sink `request` asked for, if any. */
export function valueChunkSink(request: DispatchRequest): ValueChunkSink | undefined {
  return (request as AskingRequest)[SINK];
}

/** Records that `value` went as `chunks` chunks to `sink`. */
export function markChunked(value: FrozenJson<JsonValue>, chunks: number, sink: ValueChunkSink): void {
  if (chunks > 0 && typeof value === 'object' && value !== null) counts.set(value, { sink, chunks });
}

/**
 * How many chunks `value` went as to `sink`; 0 when it goes whole. Only a big array can have gone
 * in chunks, and only to the sink of the call it was made for: the same frozen value reaching
 * another call (a hook's cache, say) goes whole there, whose sink got nothing.
 */
export function chunksOf(value: unknown, sink: ValueChunkSink | undefined): number {
  if (sink === undefined || !Array.isArray(value) || value.length < 2 * JSON_CHUNK_ELEMENTS) return 0;
  const marked = counts.get(value);
  return marked !== undefined && marked.sink === sink ? marked.chunks : 0;
}
