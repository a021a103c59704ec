/** What some corpus programs must return besides an empty `leaks` (keyed by case name). */
const INVALID = 'INVALID_ARGS';

export const EXPECTED_VALUES: Record<string, Record<string, unknown>> = {
  'Object.prototype getters named after transfer options': { value: [1, 2] },
  'Object.prototype.then makes every object a thenable': { value: 'hijacked' },
  'JSON.parse and JSON.stringify replaced in the isolate': { value: 'hello', out: [1, 'two'] },
  'Promise, Reflect and Function.prototype replaced': { value: 42, frozen: true, locked: ['then', 'constructor'] },
  'String, Atomics, Date, Map and Array built-ins the crossing uses, replaced': { value: 'a', fanOut: [1, 2, 3] },
  'Symbol.species on the stub promise': { value: 1, speciesLocked: true },
  'getters in arguments: read once, the throwing one becomes INVALID_ARGS': { x: 1, reads: 1, code: INVALID },
  'Proxy arguments with lying and throwing traps': { codes: [INVALID, INVALID, INVALID, INVALID] },
  'Symbol.toPrimitive, toJSON and valueOf in arguments are never consulted': { codes: Array(10).fill(INVALID), calls: [] },
  'cyclic and very deep arguments': { codes: [INVALID, INVALID] },
  're-entrant stub calls from getters in arguments': { outer: 1, inner: ['inner'] },
  'thenables handed to the host as arguments': { codes: [INVALID, INVALID] },
  'a thenable as the program result': { via: 'thenable' },
  'Error.prepareStackTrace sees only guest frames (callsites of host failures)': { seen: [] },
  'async iterator protocol around stub calls': { got: [1, 2] },
  'the bootstrap installer called again with forged references': { value: 'real' },
  'WebAssembly is absent, even through prototypes': { found: [], compiled: 'no', typeofWasm: 'undefined' },
  'no host globals: require, process, Buffer, fetch, module, global, queueMicrotask is plain': { present: [] },
  'SharedArrayBuffer and Atomics stay inside one isolate': { values: [5, 7], timedOut: 'timed-out', transferred: INVALID },
};
