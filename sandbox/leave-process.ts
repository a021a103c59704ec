/**
 * Leaving a process that hosts isolates. `process.exit` disposes V8's
 * platform at once, while isolated-vm may still be unwinding isolates on its
 * own threads: an isolate disposed while its program computed is destroyed
 * by the thread that ran it, once the program has stopped. The process then
 * dies of SIGSEGV instead of exiting. Leaving the event loop instead runs
 * isolated-vm's cleanup hook, which waits until every isolate is gone.
 */

/** How long a process waits for its event loop to empty before it exits anyway. */
export const LEAVE_GRACE_MS = 5_000;

/**
 * Exits with `code` once the event loop is empty. Call it after closing what
 * holds the loop (servers, runtimes, stdin). Should something still hold it,
 * the process exits anyway after `graceMs`, long after the isolates disposed
 * before this call are gone.
 */
export function leaveProcess(code: number, graceMs = LEAVE_GRACE_MS): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), graceMs).unref();
}
