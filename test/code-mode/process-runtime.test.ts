/// <reference types="vite/client" />
// The run_code conformance suite again, every program run in the `process`
// runtime: the suites below build their runtime with createTestRuntime().
import { selectTestRuntime } from '../helpers/runtimes.ts';

import.meta.glob(['./*.test.ts', '!./process-runtime.test.ts'], { eager: true });
selectTestRuntime('process');
