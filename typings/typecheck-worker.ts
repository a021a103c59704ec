/**
 * Entry of one type-check worker thread. It loads TypeScript and its lib once,
 * runs a first check so the compiler is warm, says `ready`, then answers one
 * request (one or more programs) at a time. The host enforces its budget from
 * outside: a check that runs too long or too large ends with the whole thread
 * (terminate, or the thread's heap limit), never by a check of its own.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createTypechecker } from './typecheck.ts';
import type { CheckRequest, TypecheckWorkerData, WorkerMessage } from './typecheck-protocol.ts';

const port = parentPort;
if (port === null) throw new Error('typecheck-worker runs as a worker thread (see typecheck-pool.ts)');

const checker = createTypechecker((workerData as TypecheckWorkerData).checker);
let typings = { version: -1, text: '' };

function post(message: WorkerMessage): void {
  port!.postMessage(message);
}

// Warm-up: the first check loads the compiler and parses the lib (a few hundred ms).
await checker.check('', '');
post({ type: 'ready' });

port.on('message', (request: CheckRequest) => {
  void answer(request).then(post);
});

async function answer(request: CheckRequest): Promise<WorkerMessage> {
  if (request.typings !== undefined) typings = { version: request.typingsVersion, text: request.typings };
  if (typings.version !== request.typingsVersion) {
    return { type: 'failed', id: request.id, error: `Error: typings version ${request.typingsVersion} was never sent to this worker` };
  }
  try {
    return { type: 'result', id: request.id, diagnostics: await checker.checkMany(request.codes, typings.text) };
  } catch (error) {
    return { type: 'failed', id: request.id, error: describe(error) };
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 500);
  return `thrown value: ${String(error)}`.slice(0, 500);
}
