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
/**
 * Past that bound, the isolate of a run handed at least this much value text, characters, of at
 * least this heap limit, MiB, whose heap pages in RAM stay under these (bytes, share of its limit),
 * is kept after a sweep (sweepYoungGeneration): memory held between a session's runs, against its
 * next big value parsed without collections.
 */
export const RECYCLE_SWEEP_MIN_CHARS = 256 * 1024;
export const RECYCLE_SWEEP_MIN_LIMIT_MIB = 128;
export const RECYCLE_SWEPT_MAX_PHYSICAL_BYTES = 64 * 1024 * 1024;
export const RECYCLE_SWEPT_MAX_PHYSICAL_SHARE = 1 / 2;
/** Garbage a sweep allocates, bytes: twice the semi-space `ptc` runs with, so the young generation collects at least once. */
export const RECYCLE_SWEEP_BYTES = 32 * 1024 * 1024;
/** Share of a runtime's memory budget its kept isolates may hold besides the runs: more serves more sessions, less leaves the machine more room. */
export const KEPT_BUDGET_SHARE = 1 / 4;

// ---- which calls cross synchronously ----

/** Runs in flight per core up to which a run takes the synchronous crossing: past it host turns grow long, and a waiting guest holds an isolated-vm thread. */
export const SYNC_RUNS_PER_CORE = 4;
/** How long a tool judged slow is remembered across runs, ms: longer spares more runs a missed turn, shorter tries a tool that became fast again sooner. */
export const SLOW_TOOL_MEMORY_MS = 1_000;
/** Most tools remembered slow at once: bounds the list every run starts with. */
export const SLOW_TOOL_MAX_NAMES = 256;

/** What the guest is tuned by, handed to it at install with the wire. */
export const GUEST = {
  /** Calls in one batch past which it goes at once: the host learns of a call-limit breach while a flood is still being made. */
  maxBatch: 256,
  /** Calls in one batch up to which it may cross synchronously: a blocked guest cannot hand over a fan-out's next batch. */
  syncMaxCalls: 16,
  /** Call sites captured per turn of the program: each costs a little; a fan-out's later calls share the last one. */
  sitesPerTurn: 16,
  /** Timers pending at once: each holds a host timer and promise, memory the isolate's heap limit does not count. */
  maxPendingTimers: 10_000,
} as const;

// ---- runtimes and pools ----

/** Runs admitted and not yet started past which a run goes to a burst thread: one there pays a thread crossing per call, one here waits behind the isolate set-ups. */
export const BURST_MIN_UNSTARTED = 16;
/** How many times its size the warm pool may grow under a burst: more isolates ready, more memory held. */
export const WARM_POOL_GROWTH_LIMIT = 16;
/** How long a grown warm pool waits before shrinking back, ms: longer serves the next burst, shorter frees memory sooner. */
export const WARM_POOL_SHRINK_AFTER_MS = 5_000;
/** How many times a child's computing-run cap the parent admits to it: more keeps children busy, fewer leaves runs free to go to another child. */
export const CHILD_ADMIT_AHEAD = 4;
