/**
 * Entry point of a search worker thread: runs one grep or glob job at a time
 * (search-jobs.ts) and posts back its value or its refusal. The pool
 * terminates the thread to cancel a job, which also stops a regex stuck
 * backtracking.
 */
import { parentPort } from 'node:worker_threads';
import { runSearchJob, type SearchJob } from './search-jobs.ts';
import { WorkspaceError } from './workspace-error.ts';

export interface SearchRequest {
  id: number;
  job: SearchJob;
}

export type SearchReply =
  /** Sent when the job begins: the pool's time limit counts from here, not from the thread's start-up. */
  | { id: number; started: true }
  | { id: number; ok: true; value: Awaited<ReturnType<typeof runSearchJob>> }
  | { id: number; ok: false; reason: WorkspaceError['reason']; message: string };

const port = parentPort;
if (port === null) throw new Error('search-worker.ts runs only as a worker thread');

port.on('message', (request: SearchRequest) => {
  port.postMessage({ id: request.id, started: true } satisfies SearchReply);
  runSearchJob(request.job).then(
    (value) => port.postMessage({ id: request.id, ok: true, value } satisfies SearchReply),
    (error: unknown) => {
      // Only refusals and the regex engine's own overflow cross back with their text (neither holds a
      // host path); anything else is described without detail.
      const reply: SearchReply =
        error instanceof WorkspaceError
          ? { id: request.id, ok: false, reason: error.reason, message: error.message }
          : error instanceof RangeError
            ? {
                id: request.id,
                ok: false,
                reason: 'invalid-argument',
                message: `the pattern overflowed the regex engine on a long line (RangeError: ${error.message}): simplify the pattern or narrow the path`,
              }
            : { id: request.id, ok: false, reason: 'io-error', message: 'the search failed unexpectedly: try again or narrow the path' };
      port.postMessage(reply);
    },
  );
});
