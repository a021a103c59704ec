/**
 * The run's nested calls as a waterfall: a row per call when it starts (name,
 * arguments, a growing bar), completed when it ends (duration, isError, the
 * rendered content in an expandable panel), and once the run's stats arrive,
 * the time each call waited for its turn before it started, drawn in a paler
 * shade ahead of its bar. DOM work is batched per frame so a program with
 * hundreds of calls does not block the page.
 */

interface ContentBlock {
  type: string;
  text?: string;
  [key: string]: unknown;
}

export interface DispatchStart {
  callId: string;
  name: string;
  arguments: unknown;
  seq: number;
  at: string;
}

export interface DispatchEnd {
  callId: string;
  name: string;
  isError: boolean;
  content: ContentBlock[];
  error?: { code?: string; message?: string };
  seq: number;
  at: string;
}

/** A nested call's times from the run's `stats.nestedCalls`. */
export interface CallTimes {
  callId: string;
  startMs: number;
  queuedMs: number;
  executeMs: number;
}

interface Row {
  el: HTMLLIElement;
  bar: HTMLElement;
  queued: HTMLElement;
  duration: HTMLElement;
  body: HTMLElement;
  start: DispatchStart;
  startedAt: number;
}

const MAX_ARGS_CHARS = 160;

function renderContent(blocks: ContentBlock[]): string {
  return blocks
    .map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : `[${block.type}] ${JSON.stringify(block).slice(0, 500)}`))
    .join('\n');
}

function compact(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > MAX_ARGS_CHARS ? `${text.slice(0, MAX_ARGS_CHARS - 1)}…` : text;
}

/** One row of the waterfall (not yet in the list): name, arguments, duration text and a bar from `at`. */
function makeRow(start: DispatchStart, state: string, durationText: string, at: number, content: string): Row {
  const el = document.createElement('li');
  el.dataset.testid = 'timeline-row';
  el.dataset.tool = start.name;
  el.dataset.state = state;
  const details = document.createElement('details');
  const head = document.createElement('summary');
  const name = document.createElement('span');
  name.className = 'call-name';
  name.textContent = start.name;
  const args = document.createElement('code');
  args.className = 'call-args';
  args.textContent = compact(start.arguments);
  const duration = document.createElement('span');
  duration.className = 'call-duration';
  duration.textContent = durationText;
  const track = document.createElement('span');
  track.className = 'call-track';
  track.setAttribute('aria-hidden', 'true');
  const queued = document.createElement('span');
  queued.className = 'call-queued';
  queued.dataset.testid = 'call-queued';
  const bar = document.createElement('span');
  bar.className = 'call-bar';
  bar.style.setProperty('--s', String(at));
  track.append(queued, bar);
  head.append(name, args, duration, track);
  const body = document.createElement('pre');
  body.className = 'call-content';
  body.textContent = content;
  details.append(head, body);
  el.append(details);
  return { el, bar, queued, duration, body, start, startedAt: at };
}

/** A gated call the run paused at (it has not started: a person decides first). */
export interface PausedCall {
  callId: string;
  toolName: string;
  args: unknown;
}

export interface Timeline {
  reset(): void;
  start(event: DispatchStart): void;
  /** Adds a row for a call waiting for approval; its `start` (once approved) takes the row over. */
  waiting(call: PausedCall): void;
  /** A person answered the waiting call: a denied one ends there; an approved one waits for its start. */
  decided(callId: string, decision: 'approve' | 'deny', reason: string): void;
  /** The run goes on after a decision: the bars grow again, the rows so far stay. */
  resume(): void;
  end(event: DispatchEnd): void;
  /** Draws the part of each call spent waiting for its turn, ahead of its bar (the run's stats, once it ended). */
  times(calls: readonly CallTimes[]): void;
  /** Stops the bars growing (the run ended); rows that never ended stay `running`. */
  finish(): void;
  readonly count: number;
}

export function createTimeline(list: HTMLOListElement, summary: HTMLElement): Timeline {
  const rows = new Map<string, Row>();
  let origin = 0;
  let pending: (() => void)[] = [];
  let frame = 0;
  let running = 0;
  let live = false;
  let lastEnd = 0;

  const now = () => performance.now() - origin;
  const setSpan = (span: number) => list.style.setProperty('--span', String(Math.max(span, 1)));

  function tick() {
    frame = 0;
    const batch = pending;
    pending = [];
    for (const apply of batch) apply();
    const t = live ? now() : lastEnd;
    list.style.setProperty('--now', String(t));
    setSpan(t);
    summary.textContent = `${rows.size} call${rows.size === 1 ? '' : 's'}${running > 0 ? `, ${running} running` : ''}`;
    if (live) frame = requestAnimationFrame(tick);
  }
  const schedule = (apply: () => void) => {
    pending.push(apply);
    if (frame === 0) frame = requestAnimationFrame(tick);
  };

  return {
    get count() {
      return rows.size;
    },
    reset() {
      rows.clear();
      pending = [];
      running = 0;
      lastEnd = 0;
      origin = performance.now();
      live = true;
      list.replaceChildren();
      setSpan(1);
      list.style.setProperty('--now', '0');
      summary.textContent = '';
      if (frame === 0) frame = requestAnimationFrame(tick);
    },
    start(event) {
      // Time 0 of the waterfall is the first call's start, not the click.
      if (rows.size === 0) origin = performance.now();
      const startedAt = now();
      running++;
      const waited = rows.get(event.callId);
      if (waited !== undefined && waited.el.dataset.state === 'waiting') {
        waited.start = event;
        waited.startedAt = startedAt;
        schedule(() => {
          waited.el.dataset.state = 'running';
          waited.el.dataset.startSeq = String(event.seq);
          waited.bar.style.setProperty('--s', String(startedAt));
          waited.duration.textContent = 'running…';
        });
        return;
      }
      const row = makeRow(event, 'running', 'running…', startedAt, `arguments: ${JSON.stringify(event.arguments, null, 2)}`);
      row.el.dataset.startSeq = String(event.seq);
      rows.set(event.callId, row);
      schedule(() => list.append(row.el));
    },
    end(event) {
      const row = rows.get(event.callId);
      if (row === undefined) return;
      const endedAt = now();
      lastEnd = Math.max(lastEnd, endedAt);
      running--;
      schedule(() => {
        const ms = Math.max(0, Date.parse(event.at) - Date.parse(row.start.at));
        row.el.dataset.state = event.isError ? 'error' : 'ok';
        row.el.dataset.endSeq = String(event.seq);
        row.bar.style.setProperty('--e', String(endedAt));
        row.bar.classList.add('ended');
        row.duration.textContent = `${ms} ms${event.isError ? ` · error${event.error?.code ? ` ${event.error.code}` : ''}` : ''}`;
        row.body.textContent = `arguments: ${JSON.stringify(row.start.arguments, null, 2)}\n\nisError: ${event.isError}\n\n${renderContent(event.content)}`;
      });
    },
    waiting(call) {
      if (rows.has(call.callId)) return;
      const at = now();
      const start: DispatchStart = { callId: call.callId, name: call.toolName, arguments: call.args, seq: 0, at: new Date().toISOString() };
      const row = makeRow(start, 'waiting', 'waiting for approval', at, `arguments: ${JSON.stringify(call.args, null, 2)}\n\nwaiting for a person's decision`);
      row.bar.style.setProperty('--e', String(at));
      rows.set(call.callId, row);
      schedule(() => list.append(row.el));
    },
    decided(callId, decision, reason) {
      const row = rows.get(callId);
      if (row === undefined || row.el.dataset.state !== 'waiting') return;
      schedule(() => {
        row.el.dataset.decision = decision;
        if (decision === 'approve') {
          row.duration.textContent = 'approved';
          return;
        }
        row.el.dataset.state = 'denied';
        row.bar.classList.add('ended');
        row.duration.textContent = 'denied';
        row.body.textContent = `arguments: ${JSON.stringify(row.start.arguments, null, 2)}\n\ndenied${reason === '' ? '' : `: ${reason}`}`;
      });
    },
    times(calls) {
      schedule(() => {
        const byId = new Map(calls.map((call) => [call.callId, call]));
        const laid = [...rows.values()];
        // The bars were placed as their events arrived; with every call's times known, they are
        // placed again as the server measured them, from the first call's submission.
        if (laid.length > 0 && laid.every((row) => byId.has(row.start.callId))) {
          const zero = Math.min(...laid.map((row) => byId.get(row.start.callId)!.startMs - byId.get(row.start.callId)!.queuedMs));
          lastEnd = 0;
          for (const row of laid) {
            const call = byId.get(row.start.callId)!;
            row.startedAt = call.startMs - zero;
            const end = row.startedAt + call.executeMs;
            lastEnd = Math.max(lastEnd, end);
            row.bar.style.setProperty('--s', String(row.startedAt));
            row.bar.style.setProperty('--e', String(end));
            row.duration.textContent = (row.duration.textContent ?? '').replace(/^\d+ ms/, `${Math.round(call.executeMs)} ms`);
          }
        }
        for (const call of calls) {
          const row = rows.get(call.callId);
          if (row === undefined || !(call.queuedMs > 0)) continue;
          row.el.dataset.queuedMs = String(call.queuedMs);
          row.queued.style.setProperty('--qs', String(Math.max(0, row.startedAt - call.queuedMs)));
          row.queued.style.setProperty('--qe', String(row.startedAt));
          row.queued.title = `queued ${Math.round(call.queuedMs)} ms, then executing ${Math.round(call.executeMs)} ms`;
          row.duration.textContent += ` · queued ${Math.round(call.queuedMs)} ms`;
        }
      });
    },
    resume() {
      live = true;
      if (frame === 0) frame = requestAnimationFrame(tick);
    },
    finish() {
      schedule(() => {
        live = false;
        for (const row of rows.values()) {
          if (row.el.dataset.state !== 'running') continue;
          lastEnd = Math.max(lastEnd, now());
          row.bar.style.setProperty('--e', String(lastEnd));
        }
      });
    },
  };
}
