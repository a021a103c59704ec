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
