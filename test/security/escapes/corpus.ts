/**
 * The escape corpus: hostile programs, each aimed at one way out of the
 * isolate. Every program runs after PRELUDE, which gives it `pwn` (try a
 * candidate as a Function constructor and run a payload that would touch the
 * host's process and globalThis) and `hostish` (does this object look like a
 * host object?). A program that ends normally returns `report()`:
 * `{leaks, process}`, where `leaks` must stay empty.
 *
 * `expect` is what the run must end in: `ok` (a harmless success) or a
 * failure kind. Programs adapted from published vm2 advisories name them.
 */
import type { SandboxFailureKind } from '../../../src/sandbox-runtime.ts';

export interface EscapeCase {
  name: string;
  code: string;
  expect: 'ok' | SandboxFailureKind;
  /** Also run against the process runtime (a cheap, representative subset). */
  processRuntime?: true;
}

export const PRELUDE = `
const leaks: string[] = [];
const PAYLOAD = "try { process.env.PTC_SENTINEL = 'pwned'; } catch {} try { globalThis.__ptcSentinel = 'pwned'; } catch {} try { Object.prototype.pwned = true; } catch {} return typeof process === 'undefined' ? 'no-process' : process;";
function hostish(label: string, value: any): void {
  try {
    if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return;
    if (typeof value.binding === 'function' || typeof value.mainModule === 'object' || (value.versions && value.versions.node) || typeof value.require === 'function' || typeof value.process === 'object' || typeof value.derefInto === 'function' || typeof value.applySync === 'function') leaks.push(label);
  } catch {}
}
function pwn(label: string, F: any): void {
  try {
    if (typeof F !== 'function') return;
    const made = F(PAYLOAD);
    const got = typeof made === 'function' ? made() : made;
    hostish(label, got);
  } catch {}
}
const report = () => ({ leaks, process: typeof (globalThis as any).process, require: typeof (globalThis as any).require });
`;

const C = (name: string, body: string, expect: EscapeCase['expect'] = 'ok', processRuntime?: true): EscapeCase => ({
  name,
  code: `${PRELUDE}\n${body}`,
  expect,
  ...(processRuntime ? { processRuntime } : {}),
});

export const ESCAPE_CASES: readonly EscapeCase[] = [
  // ---- constructor chains ----
  C('stub.constructor.constructor', `pwn('stub', (tools.echo as any).constructor.constructor); pwn('stub-ctor', (tools.echo as any).constructor); return report();`, 'ok', true),
  C('uncaught: stub constructor chain returning process', `return (tools.echo as any).constructor.constructor('return process')();`, 'exception', true),
  C('this.constructor.constructor at top level', `const self: any = this; pwn('this', self?.constructor?.constructor); pwn('global', (globalThis as any).constructor.constructor); return report();`),
  C('tools object prototype chain', `const t: any = tools; pwn('tools.__proto__', Object.getPrototypeOf(t)?.constructor); for (const k of Reflect.ownKeys(t)) pwn('tool ' + String(k), t[k]?.constructor?.constructor); return report();`),
  C('ToolCallError instance from a host failure', `try { await tools.fail({}); } catch (e: any) { pwn('err', e.constructor.constructor); pwn('err-proto', Object.getPrototypeOf(e).constructor.constructor); pwn('err.__proto__.__proto__', e.__proto__.__proto__.constructor.constructor); hostish('err', e); for (const k of Reflect.ownKeys(e)) hostish('err.' + String(k), e[k]); } return report();`, 'ok', true),
  C('ToolCallError from an invalid-args rejection', `try { await (tools.echo as any)({ f() {} }); } catch (e: any) { pwn('invalid', e.constructor.constructor); hostish('invalid', e); if (!(e instanceof ToolCallError) || e.code !== 'INVALID_ARGS') throw new Error('expected INVALID_ARGS'); } return report();`),
  C('promise the host resolves: constructor chain', `const p: any = tools.echo({ value: 1 }); pwn('p', p.constructor.constructor); pwn('p-proto', Object.getPrototypeOf(Object.getPrototypeOf(p)).constructor.constructor); hostish('p', p); await p; return report();`, 'ok', true),
  C('values returned by tools: constructor chains at every level', `const v: any = await tools.nested({}); pwn('v', v.constructor.constructor); pwn('list', v.list.constructor.constructor); pwn('deep', v.list[1].deep.constructor.constructor); pwn('__proto__', v.__proto__.__defineGetter__.constructor); return report();`),
  C('console, setTimeout and clearTimeout constructor chains', `pwn('log', (console.log as any).constructor); pwn('setTimeout', (setTimeout as any).constructor); pwn('clearTimeout', (clearTimeout as any).constructor.constructor); hostish('console', console); return report();`),
  C('AsyncFunction, GeneratorFunction and AsyncGeneratorFunction constructors', `pwn('async', (async () => {}).constructor); pwn('gen', (function* () {}).constructor); pwn('agen', (async function* () {}).constructor); pwn('stub-async', Object.getPrototypeOf(async () => {}).constructor); return report();`),
  C('eval and indirect eval reached from a stub', `const ev = (tools.echo as any).constructor('return eval')(); try { hostish('eval', ev('globalThis')); hostish('indirect', (0, ev)('this')); ev('process'); } catch (e: any) { if (!(e instanceof ReferenceError)) throw e; } return report();`),
  C('Function reached from a host-resolved promise callback', `await tools.echo({}).then((v: any) => { pwn('then-arg', v.constructor.constructor); try { pwn('then-fn', (arguments as any)?.callee?.constructor); } catch {} }); return report();`),
  C('caller walking from callbacks the bootstrap invokes', `function probe() { try { let f: any = (probe as any).caller; for (let i = 0; f && i < 10; i++) { hostish('caller' + i, f); pwn('caller' + i, f.constructor); f = f.caller; } } catch (e) { /* strict callers refuse */ } }
   setTimeout(probe, 0); await new Promise((r) => setTimeout(r, 5)); await tools.echo({}).then(probe); probe(); return report();`),
  C('dynamic import has no module loader', `try { const fs: any = await import('node:fs'); hostish('import', fs); } catch {} try { hostish('import.meta', (0, eval)('import.meta')); } catch {} return report();`, 'ok', true),

  // ---- pollution aimed at transfer options and JSON handling ----
  C('Object.prototype getters named after transfer options', `const seen: string[] = [];
   for (const key of ['result', 'promise', 'copy', 'externalCopy', 'reference', 'arguments', 'then', 'release', 'timeout', 'toJSON']) {
     Object.defineProperty(Object.prototype, key, { get() { seen.push(key); return key === 'then' ? undefined : { reference: true, copy: true }; }, configurable: true });
   }
   const v: any = await tools.echo({ value: [1, 2] });
   await new Promise((r) => setTimeout(r, 1));
   console.log('logging still works');
   hostish('v', v);
   for (const key of ['result', 'promise', 'copy', 'externalCopy', 'reference', 'arguments', 'then', 'release', 'timeout', 'toJSON']) delete (Object.prototype as any)[key];
   return { ...report(), seen, v: Object.getOwnPropertyNames(v), value: v.value };`, 'ok', true),
  C('Object.prototype.then makes every object a thenable', `(Object.prototype as any).then = function (resolve: any) { leaks.length === 0 && hostish('then-this', this); resolve('hijacked'); };
   let value: unknown;
   try { value = await tools.echo({ value: 1 }); } finally { delete (Object.prototype as any).then; }
   return { ...report(), value };`),
  // Known limit (SECURITY.md): indexed accessors on Array.prototype corrupt the guest's own arrays; the run fails, the host is untouched.
  C('Array.prototype index getter', `Object.defineProperty(Array.prototype, 0, { get() { return 'poisoned'; }, configurable: true });
   const v: any = await tools.echo({ value: [1, 2] });
   return { ...report(), value: v.value };`, 'exception'),
  C('JSON.parse and JSON.stringify replaced in the isolate', `const realParse = JSON.parse;
   (JSON as any).parse = (t: string) => { hostish('parse-arg', t); return { hijacked: true }; };
   (JSON as any).stringify = () => '{"hijacked":true}';
   const v: any = await tools.echo({ value: 'hello' });
   (JSON as any).parse = realParse;
   return { ...report(), value: v.value, out: [1, 'two'] };`, 'ok', true),
  C('Promise, Reflect and Function.prototype replaced', `const P: any = Promise;
   const locked: string[] = [];
   try { P.prototype.then = function () { throw new Error('then hijacked'); }; } catch { locked.push('then'); }
   try { P.prototype.constructor = Object; } catch { locked.push('constructor'); }
   (Reflect as any).apply = () => { throw new Error('apply hijacked'); };
   (Function.prototype as any).call = () => { throw new Error('call hijacked'); };
   (Function.prototype as any).apply = () => { throw new Error('apply hijacked'); };
   (Object as any).freeze = (o: unknown) => o;
   (globalThis as any).Promise = undefined;
   const v: any = await tools.echo({ value: 42 });
   return { ...report(), value: v.value, frozen: Object.isFrozen(v), locked };`, 'ok', true),
  C('String, Atomics, Date, Map and Array built-ins the crossing uses, replaced', `const sp: any = String.prototype;
   sp.slice = () => 'hijacked'; sp.indexOf = () => -1; sp.charCodeAt = () => 0;
   (Atomics as any).load = () => 2; (Atomics as any).wait = () => 'ok'; (Atomics as any).store = () => 0;
   (Date as any).now = () => 0;
   (Map.prototype as any).get = () => undefined; (Map.prototype as any).set = function () { return this; };
   (Array.prototype as any).push = () => 0;
   const v: any = await tools.echo({ value: 'a' });
   const fanOut = (await Promise.all([1, 2, 3].map((value) => tools.echo({ value })))).map((r: any) => r.value);
   return { ...report(), value: v.value, fanOut };`, 'ok', true),
  C('Symbol.species on the stub promise', `const p: any = tools.echo({ value: 1 });
   try { p.constructor = { [Symbol.species]: function (exec: any) { exec((x: any) => hostish('species-resolve', x), (e: any) => pwn('species-reject', e?.constructor?.constructor)); } }; } catch {}
   let speciesLocked = false;
   try { Object.defineProperty(Promise, Symbol.species, { get() { return function (exec: any) { exec(() => {}, () => {}); }; } }); } catch { speciesLocked = true; }
   const v: any = await p; p.then(() => {}); return { ...report(), value: v.value, speciesLocked };`, 'ok', true),

  // ---- hostile arguments ----
  C('getters in arguments: read once, the throwing one becomes INVALID_ARGS', `let reads = 0;
   const v: any = await tools.echo({ value: { get x() { reads++; return reads; } } });
   let code = '';
   try { await tools.echo({ value: { get x() { throw new Error('getter says no'); } } }); } catch (e: any) { code = e.code; pwn('getter-err', e.constructor.constructor); }
   return { ...report(), x: v.value.x, reads, code };`),
  C('Proxy arguments with lying and throwing traps', `const codes: string[] = [];
   const lying = new Proxy({}, { ownKeys: () => ['a', 'b'], getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }), get: (_t, k) => (k === 'a' ? process : 1) });
   const throwing = new Proxy({}, { getPrototypeOf() { throw new Error('proto trap'); }, ownKeys() { throw new Error('keys trap'); } });
   const arrayish = new Proxy([], { get: (t: any, k) => (k === 'length' ? 1e9 : t[k]) });
   for (const arg of [lying, throwing, { value: arrayish }, new Proxy(function () {}, {})]) {
     try { await (tools.echo as any)(arg); codes.push('ok'); } catch (e: any) { codes.push(e.code); }
   }
   return { ...report(), codes };`),
  C('Symbol.toPrimitive, toJSON and valueOf in arguments are never consulted', `const codes: string[] = [];
   const calls: string[] = [];
   const args = [
     { value: { toJSON() { calls.push('toJSON'); return 'x'; } } },
     { value: { [Symbol.toPrimitive]() { calls.push('prim'); return 1; } } },
     { value: Object.assign(Object.create({ valueOf() { calls.push('valueOf'); return 1; } }), { a: 1 }) },
     { value: new Date(0) }, { value: new Map() }, { value: 1n }, { value: Symbol('s') }, { value: [1, , 3] }, { value: -0 }, { value: NaN },
   ];
   for (const arg of args) { try { await (tools.echo as any)(arg); codes.push('ok'); } catch (e: any) { codes.push(e.code); } }
   return { ...report(), codes, calls };`),
  C('cyclic and very deep arguments', `const codes: string[] = [];
   const cyc: any = { a: {} }; cyc.a.self = cyc;
   let deep: any = {}; const root = deep; for (let i = 0; i < 5000; i++) { deep.d = {}; deep = deep.d; }
   for (const arg of [{ value: cyc }, { value: root }]) { try { await tools.echo(arg); codes.push('ok'); } catch (e: any) { codes.push(e.code); } }
   return { ...report(), codes };`),
  C('re-entrant stub calls from getters in arguments', `const inner: Promise<unknown>[] = [];
   const v: any = await tools.echo({ value: { get a() { inner.push(tools.echo({ value: 'inner' })); return 1; } } });
   const got: any[] = await Promise.all(inner);
   return { ...report(), outer: v.value.a, inner: got.map((x) => x.value) };`),
  C('thenables handed to the host as arguments', `const codes: string[] = [];
   for (const arg of [{ then(r: any) { r(1); } }, { value: { then(r: any) { r(process); } } }]) { try { await (tools.echo as any)(arg); codes.push('ok'); } catch (e: any) { codes.push(e.code); } }
   return { ...report(), codes };`),
  C('a thenable as the program result', `return { then(resolve: any) { resolve({ ...report(), via: 'thenable' }); } };`),
  C('a thenable result whose then getter throws', `return Object.defineProperty({}, 'then', { get() { throw new Error('then getter'); } });`, 'exception'),
  C('a hostile result: getters, proxies and toJSON', `return { ...report(), a: new Proxy({}, { ownKeys() { throw new Error('x'); } }) };`, 'invalid-output'),

  // ---- stacks and errors ----
  C('Error.prepareStackTrace sees only guest frames (callsites of host failures)', `const seen: string[] = [];
   (Error as any).prepareStackTrace = (_e: unknown, sites: any[]) => {
     for (const s of sites) {
       seen.push(String(s.getFileName?.()) + ':' + String(s.getFunctionName?.()) + ':' + String(s.getTypeName?.()));
       hostish('this', s.getThis?.()); hostish('fn', s.getFunction?.()); pwn('site-fn', s.getFunction?.()?.constructor);
     }
     return 'custom';
   };
   try { await tools.fail({}); } catch (e: any) { String(e.stack); }
   try { await (tools.echo as any)(null); } catch (e: any) { String(e.stack); }
   await tools.echo({}).then(() => String(new Error('in callback').stack));
   (Error as any).prepareStackTrace = undefined;
   return { ...report(), seen: seen.filter((s) => !/^(agent\.ts|ptc-bootstrap\.js|undefined|null):/.test(s)) };`, 'ok', true),
  C('CVE-2023-29017 style: prepareStackTrace callsites reach Function', `(Error as any).prepareStackTrace = (_e: unknown, frames: any[]) => { pwn('frames', frames.constructor.constructor); for (const f of frames) pwn('frame', f.constructor?.constructor); return ''; };
   try { await tools.fail({}); } catch (e: any) { e.stack; }
   await new Promise((r) => setTimeout(r, 1));
   (async () => { throw new Error('x'); })().catch((e) => e.stack);
   await tools.echo({});
   return report();`),
  C('stack text of every error kind has no host frame', `const stacks: string[] = [];
   Error.stackTraceLimit = Infinity;
   try { await tools.fail({}); } catch (e: any) { stacks.push(e.stack); }
   try { await (tools.echo as any)(1); } catch (e: any) { stacks.push(e.stack); }
   try { await (tools as any).missing({}); } catch (e: any) { stacks.push(String(e.stack)); }
   await tools.echo({}).then(() => stacks.push(String(new Error('cb').stack)));
   await new Promise((r) => setTimeout(() => { stacks.push(String(new Error('timer').stack)); r(0); }, 1));
   const o: any = {}; Error.captureStackTrace(o); stacks.push(o.stack);
   return { ...report(), stacks };`),
  C('CVE-2023-30547 style: a Proxy-wrapped toString thrown at the host handler', `const err: any = new Error('x');
   err.name = { toString: new Proxy(() => '', { apply(_t, _this, args: any) { pwn('apply-args', args.constructor.constructor); throw args; } }) };
   throw err;`, 'exception', true),
  C('a Proxy thrown from a timer callback', `const kinds: string[] = [];
   const p = new Proxy({}, { getPrototypeOf() { throw new Error('trap'); }, get() { throw new Error('trap'); } });
   setTimeout(() => { throw p; }, 0);
   await new Promise((r) => setTimeout(r, 20));
   return report();`, 'exception'),
  C('CVE-2023-32314 style: an error whose name is a Symbol', `const err: any = new Error(); err.name = Symbol();
   const f = async () => err.stack;
   await f().catch((e: any) => pwn('sym', e?.constructor?.constructor));
   throw err;`, 'exception'),
  C('CVE-2023-37466 style: stack overflow inside a species promise', `Error.stackTraceLimit = 1;
   async function fn() { (function stack(): void { new Error().stack; stack(); })(); }
   const p: any = fn();
   Object.defineProperty(p, 'constructor', { value: { [Symbol.species]: class FakePromise { constructor(executor: any) { executor((x: any) => x, (err: any) => pwn('overflow', err?.constructor?.constructor)); } } } });
   p.then();
   await new Promise((r) => setTimeout(r, 1));
   return report();`),
  C("Symbol.for('nodejs.util.inspect.custom') on logged, thrown and returned values", `const custom = Symbol.for('nodejs.util.inspect.custom');
   const evil = { [custom]: (_d: unknown, _o: unknown, inspect: any) => { pwn('inspect', inspect?.constructor); return 'custom'; }, a: 1 };
   console.log(evil);
   try { await (tools.echo as any)({ value: evil }); } catch {}
   return { ...report(), logged: true };`),
  C('a custom inspect on an uncaught error', `const err: any = new Error('inspect me'); err[Symbol.for('nodejs.util.inspect.custom')] = () => { throw new Error('inspected on the host'); }; throw err;`, 'exception'),

  // ---- async iterators and microtasks ----
  C('async iterator protocol around stub calls', `(Object.prototype as any)[Symbol.asyncIterator] = function () { hostish('iter-this', this); return { next: async () => ({ done: true }) }; };
   const got: unknown[] = [];
   async function* gen() { yield await tools.echo({ value: 1 }); yield await tools.echo({ value: 2 }); }
   for await (const v of gen()) got.push((v as any).value);
   for await (const v of ({} as any)) got.push(v);
   delete (Object.prototype as any)[Symbol.asyncIterator];
   return { ...report(), got };`),
  C('microtask chains that outlive the run', `let n = 0; const loop = (): any => tools.echo({ value: ++n }).then(loop, loop); loop(); loop();
   await tools.echo({});
   return report();`),
  C('calls queued after return are not served', `setTimeout(() => { void tools.echo({ value: 'late' }); }, 0);
   Promise.resolve().then(() => tools.echo({ value: 'after-return' }));
   return report();`),

  // ---- what the global object offers ----
  C('the bootstrap installer called again with forged references', `const forged = { apply: async () => 'V\\n{"x":1}', applyIgnored: () => {} };
   let started = 'no';
   try { const start = (globalThis as any).installGuest?.(forged, forged, forged, forged, forged, '{"reserved":["tools"],"removed":[]}'); started = typeof start; } catch { started = 'threw'; }
   const v: any = await tools.echo({ value: 'real' });
   return { ...report(), value: v.value };`),
  C('WebAssembly is absent, even through prototypes', `const names = Object.getOwnPropertyNames(globalThis);
   const found = names.filter((n) => /wasm|webassembly/i.test(n));
   let compiled = 'no';
   try { const W = (globalThis as any).WebAssembly ?? (Object.getPrototypeOf(async () => {}) as any).WebAssembly; if (W) compiled = typeof W.Module; } catch {}
   return { ...report(), found, compiled, typeofWasm: typeof (globalThis as any).WebAssembly };`, 'ok', true),
  C('no host globals: require, process, Buffer, fetch, module, global, queueMicrotask is plain', `const names = ['require', 'process', 'Buffer', 'fetch', 'module', 'exports', 'global', '__dirname', '__filename', 'ivm', '_ivm', 'setImmediate', 'setInterval', 'XMLHttpRequest', 'WebSocket', 'Worker', 'SharedWorker', 'importScripts', 'Deno', 'Bun'];
   const present = names.filter((n) => n in globalThis);
   for (const n of Object.getOwnPropertyNames(globalThis)) hostish('global.' + n, (globalThis as any)[n]);
   return { ...report(), present };`, 'ok', true),
  C('SharedArrayBuffer and Atomics stay inside one isolate', `const sab = new SharedArrayBuffer(16); const ia = new Int32Array(sab);
   Atomics.add(ia, 0, 5); Atomics.store(ia, 1, 7);
   const timedOut = Atomics.wait(ia, 2, 0, 1);
   let transferred = 'no';
   try { await (tools.echo as any)({ value: sab }); transferred = 'yes'; } catch (e: any) { transferred = e.code; }
   return { ...report(), values: [Atomics.load(ia, 0), Atomics.load(ia, 1)], timedOut, transferred };`, 'ok', true),
  C('the tool-call crossing memory is out of reach: typed-array and Atomics hooks see none of it', `const seen: string[] = [];
   const TA: any = Object.getPrototypeOf(Uint16Array.prototype);
   for (const name of ['length', 'buffer', 'byteOffset', 'byteLength']) {
     const d = Object.getOwnPropertyDescriptor(TA, name)!;
     Object.defineProperty(TA, name, { get() { if (this.buffer instanceof SharedArrayBuffer) seen.push('getter ' + name); return d.get!.call(this); }, configurable: true });
   }
   for (const C of [Uint16Array, Int32Array] as any[]) {
     class Spy extends C { constructor(...args: any[]) { super(...args); if (args[0] instanceof SharedArrayBuffer) seen.push('species ' + C.name); } }
     Object.defineProperty(C, Symbol.species, { get() { return Spy; }, configurable: true });
     C.prototype.constructor = Spy;
   }
   for (const name of ['wait', 'load', 'store', 'compareExchange', 'notify']) { const f = (Atomics as any)[name]; (Atomics as any)[name] = (...args: any[]) => { seen.push('Atomics.' + name); return f(...args); }; }
   const fromCharCode = String.fromCharCode; String.fromCharCode = (...codes: number[]) => { seen.push('fromCharCode'); return fromCharCode(...codes); };
   const echoed: any[] = [];
   for (const value of ['a', 'é😀'.repeat(5000), 'b']) echoed.push(((await tools.echo({ value })) as any).value.length);
   echoed.push(...((await Promise.all([1, 2, 3].map((n) => tools.echo({ n })))) as any[]).map((e) => e.n));
   if (seen.length > 0) throw new Error('reached: ' + seen.join(', '));
   return { ...report(), echoed };`),
];
