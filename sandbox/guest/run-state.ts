/**
 * The run this install serves (one run per isolate, ever): its configuration,
 * set by `start`, and whether its program has returned. Read everywhere, set
 * only through the two functions here.
 */

export interface GuestConfig {
  maxLogBytes: number;
  maxResultBytes: number;
  maxArgBytes: number;
  /** Tools whose calls cross asynchronously from the start (the host judged them slow). */
  slowTools?: string[];
  /** Longest wait for the host's answer in a synchronous crossing, ms. */
  syncWaitMs?: number;
  /** Set when the host asks for the program's nondeterministic reads: the values to read first (a replay), in order. */
  reads?: number[];
}

export let config: GuestConfig = { maxLogBytes: 0, maxResultBytes: 0, maxArgBytes: 0 };
/** The program's own promise has settled: later calls (left running) take the async crossing. */
export let returned = false;

export const configure = ((value: GuestConfig): void => {
  config = value;
});
export const markReturned = ((): void => {
  returned = true;
});
