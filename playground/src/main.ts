/** The playground page: wires the editor, the run stream, the timeline and the Inspect tabs. */
import { ApiError, api, authEvents, ensureOk, getToken, randomId, readEventStream, setToken } from './api.ts';
import { createEditor } from './editor.ts';
import { createInspect, setUpTabs } from './inspect.ts';
import { readFragment, shareFragment } from './share.ts';
import { createTimeline, type CallTimes, type DispatchEnd, type DispatchStart } from './timeline.ts';
import { createTsClient } from './ts-client.ts';

const SESSION_KEY = 'ptc.playground.session';
/** How often the typings are revalidated (a 304 while their ETag holds). */
const TYPINGS_POLL_MS = 10_000;
const EXAMPLE = `// The body of an async function: await tools, log, return a result.
const [md, ts] = await Promise.all([
  tools.glob({ pattern: '**/*.md' }),
  tools.glob({ pattern: '**/*.ts' }),
]);
console.log(\`\${md.paths.length} markdown files\`);
return { markdown: md.paths.slice(0, 5), typescript: ts.paths.length };
`;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const runButton = $<HTMLButtonElement>('run');
const cancelButton = $<HTMLButtonElement>('cancel');
const timeoutInput = $<HTMLInputElement>('timeout');
const sessionInput = $<HTMLInputElement>('session');
const tokenInput = $<HTMLInputElement>('token');
const logs = $<HTMLPreElement>('logs');
const resultBox = $<HTMLDivElement>('result');
const errorBox = $<HTMLDivElement>('error');
const status = $<HTMLDivElement>('status');
const tokenBanner = $<HTMLDivElement>('token-required');
const approvalForm = $<HTMLFormElement>('approval');
const approvalCall = $<HTMLParagraphElement>('approval-call');
const approvalArgs = $<HTMLPreElement>('approval-args');
const approvalReason = $<HTMLInputElement>('approval-reason');
const approveButton = $<HTMLButtonElement>('approve');
const denyButton = $<HTMLButtonElement>('deny');

const ts = createTsClient();
const shared = readFragment(location.hash);
let typesLoadedResolve: () => void = () => undefined;
const typesLoaded = new Promise<void>((resolve) => (typesLoadedResolve = resolve));
const editor = createEditor({ parent: $('editor'), doc: shared.code ?? EXAMPLE, ts, typesLoaded, onRun: () => void run() });
if (shared.timeout !== undefined) timeoutInput.value = shared.timeout;
sessionInput.value = localStorage.getItem(SESSION_KEY) ?? '';
tokenInput.value = getToken();
const timeline = createTimeline($<HTMLOListElement>('timeline'), $('timeline-summary'));
const inspect = createInspect();

// --- access -------------------------------------------------------------------

authEvents.addEventListener('token-required', () => {
  tokenBanner.hidden = false;
  document.body.dataset.auth = 'required';
});
authEvents.addEventListener('token-accepted', () => {
  tokenBanner.hidden = true;
  document.body.dataset.auth = 'ok';
});
const applyToken = () => {
  setToken(tokenInput.value.trim());
  void loadAll();
};
tokenInput.addEventListener('change', applyToken);
tokenInput.addEventListener('keydown', (event) => {
  if (event.key === 'Enter') {
    event.preventDefault();
    applyToken();
  }
});

sessionInput.addEventListener('change', () => {
  const value = sessionInput.value.trim();
  if (value === '') localStorage.removeItem(SESSION_KEY);
  else if (sessionInput.checkValidity()) localStorage.setItem(SESSION_KEY, value);
});
$('settings').addEventListener('submit', (event) => event.preventDefault());

// --- typings, prompt, tools, events ------------------------------------------

let typingsEtag: string | undefined;
async function loadTypings(): Promise<void> {
  const headers: Record<string, string> = typingsEtag === undefined ? {} : { 'if-none-match': typingsEtag };
  const response = await ensureOk(await api('/v1/typings', { headers, cache: 'no-store' }));
  if (response.status === 304) return;
  const text = await response.text();
  typingsEtag = response.headers.get('etag') ?? undefined;
  inspect.showTypings(text);
  // The worker may still be loading TypeScript: the page does not wait for it.
  void ts.request({ op: 'typings', text }).then(() => {
    typesLoadedResolve();
    editor.relint();
    if (performance.getEntriesByName('playground-types-ready').length === 0) performance.mark('playground-types-ready');
  });
}

const currentSession = () => sessionInput.value.trim() || 'default';
let shownTab = 'typings';
const loaded = new Set<string>();
async function showTab(name: string): Promise<void> {
  shownTab = name;
  try {
    if (name === 'prompt' && !loaded.has(name)) await inspect.loadPrompt();
    else if (name === 'tools' && !loaded.has(name)) await inspect.loadTools();
    else if (name === 'events') await inspect.loadEvents(currentSession(), true);
    loaded.add(name);
  } catch (error) {
    say(describe(error));
  }
}
setUpTabs((name) => void showTab(name));
$('events-reload').addEventListener('click', () => void inspect.loadEvents(currentSession(), true).catch((e) => say(describe(e))));
$('events-more').addEventListener('click', () => void inspect.loadEvents(currentSession(), false).catch((e) => say(describe(e))));

async function loadAll(): Promise<void> {
  loaded.clear();
  try {
    await loadTypings();
    if (shownTab !== 'typings') await showTab(shownTab);
    say('');
  } catch (error) {
    say(describe(error));
  }
}

// --- run ------------------------------------------------------------------------

let running: { callId: string } | undefined;

function say(text: string): void {
  status.textContent = text;
}

function describe(error: unknown): string {
  if (error instanceof ApiError) return error.status === 401 ? 'Token required: paste the server’s token into the Token field.' : `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

let logBuffer: string[] = [];
let logFrame = 0;
/** An `agent/context` event as the stream sends it: context a tool left for the model's next request. */
interface InjectedContext {
  name?: string;
  source?: { plugin?: string };
  content?: unknown;
}

/** One console line for an injected context, so it shows beside the logs as it happens. */
function describeContext(context: InjectedContext): string {
  const blocks = Array.isArray(context.content) ? (context.content as { type?: unknown; text?: unknown }[]) : [];
  const text = blocks.map((block) => (block?.type === 'text' ? String(block.text) : `[${String(block?.type)} content]`)).join(' ');
  return `[context from ${context.source?.plugin ?? 'a tool'} via ${context.name ?? 'a call'}] ${text}`;
}

function appendLog(line: string): void {
  logBuffer.push(line);
  if (logFrame === 0) logFrame = requestAnimationFrame(flushLogs);
}

/** Shows the buffered lines now: on the next frame while a run streams, at once when it ends, so no line comes after its result. */
function flushLogs(): void {
  if (logFrame !== 0) cancelAnimationFrame(logFrame);
  logFrame = 0;
  if (logBuffer.length === 0) return;
  logs.append(`${logBuffer.join('\n')}\n`);
  logBuffer = [];
  logs.scrollTop = logs.scrollHeight;
}

function setRunning(on: boolean): void {
  runButton.disabled = on;
  cancelButton.disabled = !on;
  document.body.dataset.running = String(on);
}

interface RunBody {
  callId: string;
  isError: boolean;
  /** Set when the run paused for approval. */
  paused?: Paused;
  value?: { logs?: string[]; result?: unknown; paused?: Paused };
  error?: { message: string; info?: { code?: string } };
  stats?: RunStats;
}

/** The run's `stats`: its wall time and, for a run, how close it came to each limit. */
interface RunStats {
  wallMs?: number;
  calls?: number;
  maxCalls?: number;
  heapPeakBytes?: number;
  heapLimitBytes?: number;
  logBytes?: number;
  maxLogBytes?: number;
  resultBytes?: number;
  maxResultBytes?: number;
  nestedCalls?: CallTimes[];
}

/** A share of a limit past which the budget line marks it as near. */
const NEAR_LIMIT = 0.8;

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** One line under the result or the error: each budget used against its limit, a near one marked. */
function budgetsOf(stats: RunStats | undefined): HTMLElement | undefined {
  if (stats?.maxCalls === undefined) return undefined;
  const line = document.createElement('div');
  line.className = 'budgets';
  line.dataset.testid = 'budgets';
  const parts: [string, number | undefined, number | undefined, (n: number) => string][] = [
    ['calls', stats.calls, stats.maxCalls, String],
    ['heap', stats.heapPeakBytes, stats.heapLimitBytes, formatBytes],
    ['logs', stats.logBytes, stats.maxLogBytes, formatBytes],
    ['result', stats.resultBytes, stats.maxResultBytes, formatBytes],
  ];
  for (const [name, used, limit, format] of parts) {
    if (used === undefined || limit === undefined) continue;
    const part = document.createElement('span');
    part.dataset.budget = name;
    if (limit > 0 && used / limit >= NEAR_LIMIT) part.dataset.near = 'true';
    part.textContent = `${name} ${format(used)} of ${format(limit)}`;
    line.append(part);
  }
  return line;
}

function showResult(body: RunBody): void {
  const budgets = budgetsOf(body.stats);
  if (body.isError) {
    showError(body.error?.info?.code ?? 'ERROR', body.error?.message ?? 'the run failed');
    if (budgets !== undefined) errorBox.append(budgets);
    return;
  }
  resultBox.replaceChildren();
  const head = document.createElement('div');
  head.className = 'result-head';
  head.textContent = `Result · ${body.stats?.calls ?? 0} calls · ${Math.round(body.stats?.wallMs ?? 0)} ms`;
  const pre = document.createElement('pre');
  const value = body.value?.result;
  pre.textContent = value === undefined ? '(no result)' : typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  resultBox.append(head, pre);
  if (budgets !== undefined) resultBox.append(budgets);
  resultBox.hidden = false;
}

/** The error with its code frame; each `agent.ts:L:C` becomes a link to that editor position. */
function showError(code: string, message: string): void {
  errorBox.replaceChildren();
  const head = document.createElement('div');
  head.className = 'error-head';
  head.textContent = code;
  head.dataset.code = code;
  const pre = document.createElement('pre');
  let last = 0;
  for (const match of message.matchAll(/agent\.ts:(\d+):(\d+)/g)) {
    pre.append(message.slice(last, match.index));
    const link = document.createElement('a');
    link.href = '#';
    link.dataset.testid = 'error-location';
    link.textContent = match[0];
    const line = Number(match[1]);
    const column = Number(match[2]);
    link.setAttribute('aria-label', `Go to line ${line}, column ${column} in the editor`);
    link.addEventListener('click', (event) => {
      event.preventDefault();
      editor.goTo(line, column);
    });
    pre.append(link);
    last = (match.index ?? 0) + match[0].length;
  }
  pre.append(message.slice(last));
  errorBox.append(head, pre);
  errorBox.hidden = false;
}

async function run(): Promise<void> {
  if (running !== undefined) return;
  const callId = randomId();
  timeline.reset();
  logs.textContent = '';
  logBuffer = [];
  const body: Record<string, unknown> = { code: editor.getCode(), callId, description: 'playground run' };
  const session = sessionInput.value.trim();
  if (session !== '') body.sessionId = session;
  if (timeoutInput.value !== '') body.timeoutMs = Number(timeoutInput.value);
  await follow(callId, '/v1/run', body, 'Running…');
}

/** POSTs `body` to `path` as a stream and shows what it tells: the timeline, logs, then the result, failure or pause. */
async function follow(callId: string, path: string, body: Record<string, unknown>, saying: string): Promise<void> {
  running = { callId };
  setRunning(true);
  hideApproval();
  resultBox.hidden = true;
  errorBox.hidden = true;
  say(saying);
  try {
    const response = await ensureOk(
      await api(path, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(body) }),
    );
    let ended = false;
    for await (const { event, data } of readEventStream(response)) {
      if (event === 'ptc-dispatch-start') timeline.start(data as DispatchStart);
      else if (event === 'ptc-dispatch') timeline.end(data as DispatchEnd);
      else if (event === 'log') appendLog((data as { line: string }).line);
      else if (event === 'context') appendLog(describeContext(data as InjectedContext));
      else if (event === 'result') {
        ended = true;
        flushLogs();
        timeline.times((data as RunBody).stats?.nestedCalls ?? []);
        const paused = pausedOf(data as RunBody);
        if (paused === undefined) showResult(data as RunBody);
        else showApproval(paused);
      } else if (event === 'error') {
        ended = true;
        flushLogs();
        const error = data as { code?: string; message?: string };
        showError(error.code ?? 'INTERNAL', error.message ?? 'the server failed');
      }
    }
    if (!ended) showError('STREAM_CLOSED', 'the stream closed before the result: the server stopped or the connection dropped');
    say('');
  } catch (error) {
    if (error instanceof ApiError) showError(error.code, describe(error));
    else showError('NETWORK', describe(error));
    say('');
  } finally {
    flushLogs();
    timeline.finish();
    running = undefined;
    setRunning(false);
  }
}

// --- approval -------------------------------------------------------------------

/** A paused run's gated call, as the run's result names it. */
interface Paused {
  callId: string;
  pending: PendingCall[];
}
interface PendingCall {
  seq: number;
  toolName: string;
  args: unknown;
}

function pausedOf(body: RunBody): Paused | undefined {
  return body.isError ? undefined : (body.paused ?? body.value?.paused);
}

let waitingFor: Paused | undefined;

function showApproval(paused: Paused): void {
  waitingFor = paused;
  const call = paused.pending[0];
  if (call !== undefined) timeline.waiting({ callId: `${paused.callId}:ptc:${call.seq}`, toolName: call.toolName, args: call.args });
  approvalCall.textContent = call === undefined ? 'The run waits for a decision.' : `Call ${call.seq}: tools.${call.toolName}(…) waits for your decision; the run resumes where it stopped.`;
  approvalArgs.textContent = JSON.stringify(call?.args ?? null, null, 2);
  approvalReason.value = '';
  approvalForm.hidden = false;
  document.body.dataset.paused = 'true';
  say('Paused: waiting for approval.');
}

function hideApproval(): void {
  approvalForm.hidden = true;
  delete document.body.dataset.paused;
}

async function decide(decision: 'approve' | 'deny'): Promise<void> {
  const paused = waitingFor;
  if (paused === undefined || running !== undefined) return;
  waitingFor = undefined;
  const reason = approvalReason.value.trim();
  const call = paused.pending[0];
  if (call !== undefined) timeline.decided(`${paused.callId}:ptc:${call.seq}`, decision, reason);
  timeline.resume();
  // The resumed run replays the program from its start, so it logs everything again: its lines replace these.
  logs.textContent = '';
  logBuffer = [];
  const body: Record<string, unknown> = { decision, ...(reason === '' ? {} : { reason }) };
  await follow(paused.callId, `/v1/runs/${encodeURIComponent(paused.callId)}/decision`, body, decision === 'approve' ? 'Approved: resuming…' : 'Denied: resuming…');
}

/** A run of this session that paused before the page was opened (a reload, another tab) is offered for a decision too. */
async function showWaitingRun(): Promise<void> {
  try {
    const response = await api('/v1/approvals', { cache: 'no-store' });
    // A server without durable runs, or one that wants a token: nothing to offer.
    if (!response.ok) return;
    const { approvals } = (await response.json()) as { approvals: (Paused & { sessionId: string })[] };
    const latest = approvals.filter((run) => run.sessionId === currentSession()).at(-1);
    if (latest === undefined || running !== undefined || waitingFor !== undefined) return;
    timeline.reset();
    showApproval({ callId: latest.callId, pending: latest.pending });
    timeline.finish();
  } catch {
    // Offering a waiting run is a convenience: the page works without it.
  }
}

approveButton.addEventListener('click', () => void decide('approve'));
denyButton.addEventListener('click', () => void decide('deny'));
approvalForm.addEventListener('submit', (event) => event.preventDefault());

async function cancel(): Promise<void> {
  if (running === undefined) return;
  cancelButton.disabled = true;
  try {
    await ensureOk(await api(`/v1/runs/${encodeURIComponent(running.callId)}`, { method: 'DELETE' }));
    say('Cancelling…');
  } catch (error) {
    say(describe(error));
  }
}

runButton.addEventListener('click', () => void run());
cancelButton.addEventListener('click', () => void cancel());
document.addEventListener('keydown', (event) => {
  // Ctrl/Cmd+Enter also runs from outside the editor (the editor has its own binding).
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !event.defaultPrevented) {
    event.preventDefault();
    void run();
  }
});

// --- share ----------------------------------------------------------------------

$('share').addEventListener('click', () => {
  const fragment = shareFragment({ code: editor.getCode(), timeout: timeoutInput.value });
  history.replaceState(null, '', fragment);
  const url = location.href;
  void navigator.clipboard?.writeText(url).then(
    () => say('Link copied: it holds the program in its fragment, which is never sent to the server.'),
    () => say('The address bar now holds the share link.'),
  );
});
window.addEventListener('hashchange', () => {
  const next = readFragment(location.hash);
  if (next.code !== undefined && next.code !== editor.getCode()) editor.setCode(next.code);
  if (next.timeout !== undefined) timeoutInput.value = next.timeout;
});

// --- start ----------------------------------------------------------------------

const revalidateTypings = () => {
  if (document.visibilityState === 'visible' && document.body.dataset.auth !== 'required') void loadTypings().catch(() => undefined);
};
setInterval(revalidateTypings, TYPINGS_POLL_MS);
// Coming back to the tab is when a changed tool set matters: check at once.
window.addEventListener('focus', revalidateTypings);
document.addEventListener('visibilitychange', revalidateTypings);
void loadAll().finally(() => {
  document.body.dataset.ready = 'true';
  performance.mark('playground-ready');
  void showWaitingRun();
});
