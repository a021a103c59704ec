/**
 * The sandbox's hand-tuned thresholds, in one place. Each says what it trades; the measurements
 * behind them are in bench/RESULTS.md. Limits a user sets are not here (src/code-mode/limits.ts).
 */

// ---- a big value, a slice at a time (crossing/value-slices.ts) ----

/** Elements of the first slice: fewer gets the guest parsing sooner, more costs fewer crossings. */
export const SLICE_FIRST_ELEMENTS = 250;
/** Most elements per slice; arrays of twice this go in slices: smaller ones are not worth the crossings. */
export const SLICE_MAX_ELEMENTS = 1_000;
/** Fewest elements per later slice, however large they are: a slice per element costs more than its size. */
export const SLICE_MIN_ELEMENTS = 16;
/**
 * Text each later slice aims at: under the size at which V8 puts a string in its large-object
 * space (slower to write and to copy), even as two-byte text, with room for larger elements.
 */
export const SLICE_CHARS = 56_000;
/** Objects a big array is looked for in, from the value down: deeper costs a look at every reply. */
export const SLICE_MEMBER_DEPTH = 2;

// ---- the crossing (crossing/channel.ts) ----

/**
 * Replies (while more calls run) past which they go to a waiting guest at once rather than at the
 * end of the host's turn: each push costs a crossing, but the guest parses while the host works.
 */
export const PUSH_CHARS = 16 * 1024;
/**
 * Bytes of replies one synchronous crossing carries; bigger batches go the asynchronous way.
 * Allocated per run: more lets bigger replies skip a crossing, and costs every waiting run memory.
 */
export const SHARED_REPLY_BYTES = 16 * 1024;
/**
 * Longest a guest blocks in a synchronous crossing, ms. The host answers within its turn; a longer
 * turn (an overloaded host) is not waited out, since the waiting guest holds an isolated-vm thread.
 */
export const SYNC_WAIT_MS = 100;

// ---- reusing an ended run's isolate (isolate-run.ts, recycleIsolate) ----

/**
 * How long the isolate of an ended run may take to answer whether it is reusable, ms: a healthy one
 * answers at once; one that does not (a program's endless chain of microtasks) is disposed.
 */
export const RECYCLE_PROBE_MS = 250;
/**
 * Heap in use past which an ended run's isolate is disposed rather than kept, bytes and as a share
 * of its limit: kept bigger, a program that fits a fresh isolate could fail `memory` in it.
 */
export const RECYCLE_MAX_HEAP_BYTES = 8 * 1024 * 1024;
export const RECYCLE_MAX_HEAP_SHARE = 1 / 16;
