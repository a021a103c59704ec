/**
 * The crossing's wire as the host hands it at install (`wireJson`): message
 * kinds, the shared memory's layout and the guest's tuning, defined once in
 * sandbox/crossing/protocol.ts.
 */

import type { Wire } from '../crossing/protocol.ts';
import { jsonParse } from './builtins.ts';
import { wireJson } from './host.ts';

const wire = jsonParse(wireJson) as Wire;
export const { value: REPLY_VALUE, sliced: REPLY_SLICED, error: REPLY_ERROR } = wire.reply;
export const { stateWord: STATE_WORD, lengthWord: LENGTH_WORD, waiting: WAITING, abandoned: ABANDONED, headerBytes: SHARED_HEADER_BYTES } = wire.shared;
export const SYNC_PREFIX = wire.syncPrefix;
export const SLOW_ORDINAL = wire.slowOrdinal;
export const RESULT = wire.result;
export const { maxBatch: MAX_BATCH, syncMaxCalls: SYNC_MAX_CALLS, sitesPerTurn: SITES_PER_TURN, maxPendingTimers: MAX_PENDING_TIMERS } = wire.tuning;
