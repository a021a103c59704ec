import { expect, it } from 'vitest';
import { failure, success } from '../../src/results.ts';
import { outcomeOf } from '../../services/metrics.ts';

// The outcome label reads the failure's fields, never its message.
it('labels a run by its kind field, else its code in lower case, and ignores what the message says', () => {
  expect(outcomeOf(success(1, [], undefined))).toBe('ok');
  expect(outcomeOf(failure('CODE_RUN_FAILED', 'code run failed (timeout): prose only', 'PtcError', { kind: 'memory' }))).toBe('memory');
  expect(outcomeOf(failure('CODE_RUN_FAILED', 'code run failed (timeout): a message naming a kind the fields do not'))).toBe('code_run_failed');
  expect(outcomeOf(failure('TOOL_TIMEOUT', 'too slow'))).toBe('tool_timeout');
});
