/**
 * The Inspect tabs: typings (read-only, highlighted), the model prompt, the
 * tool list with schemas, and a session's durable events, paged.
 */
import type { EditorView } from '@codemirror/view';
import { api, ensureOk } from './api.ts';
import { createReadOnlyView } from './editor.ts';

const PAGE_SIZE = 50;

function byId<T extends HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

/** Roving tabindex and arrow keys, as the ARIA tabs pattern has it. */
export function setUpTabs(onShow: (name: string) => void): void {
  const tabs = [...document.querySelectorAll<HTMLButtonElement>('[role="tab"]')];
  const select = (tab: HTMLButtonElement, focus: boolean) => {
    for (const other of tabs) {
      const selected = other === tab;
      other.setAttribute('aria-selected', String(selected));
      other.tabIndex = selected ? 0 : -1;
      byId(other.getAttribute('aria-controls') ?? '').hidden = !selected;
    }
    if (focus) tab.focus();
    onShow(tab.id.replace(/^tab-/, ''));
  };
  tabs.forEach((tab, index) => {
    tab.addEventListener('click', () => select(tab, false));
    tab.addEventListener('keydown', (event) => {
      const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
      if (step !== 0) select(tabs[(index + step + tabs.length) % tabs.length], true);
      else if (event.key === 'Home') select(tabs[0], true);
      else if (event.key === 'End') select(tabs[tabs.length - 1], true);
    });
  });
}

export interface Inspect {
  showTypings(text: string): void;
  loadPrompt(): Promise<void>;
  loadTools(): Promise<void>;
  loadEvents(sessionId: string, fromStart: boolean): Promise<void>;
}

interface EventsPage {
  events: { seq?: number; type?: string; name?: string; callId?: string; at?: string }[];
  next?: number | string | null;
}

export function createInspect(): Inspect {
  let typingsView: EditorView | undefined;
  let cursor: { sessionId: string; after: number | string; done: boolean; paged: boolean; rest: EventsPage['events'] } | undefined;

  const renderEvents = (events: EventsPage['events'], append: boolean) => {
    const list = byId<HTMLOListElement>('events');
    if (!append) list.replaceChildren();
    const items = events.map((event) => {
      const li = document.createElement('li');
      li.dataset.testid = 'event';
      const details = document.createElement('details');
      const summary = document.createElement('summary');
      summary.textContent = `#${event.seq ?? '?'} ${event.type ?? ''} ${event.name ?? ''} ${event.at ?? ''}`;
      const pre = document.createElement('pre');
      pre.textContent = JSON.stringify(event, null, 2);
      details.append(summary, pre);
      li.append(details);
      return li;
    });
    list.append(...items);
    byId('events-summary').textContent = `${list.children.length} event${list.children.length === 1 ? '' : 's'}${cursor?.done === false ? ', more available' : ''}`;
    byId<HTMLButtonElement>('events-more').disabled = cursor === undefined || cursor.done;
  };

  return {
    showTypings(text) {
      const panel = byId('panel-typings');
      if (typingsView === undefined) {
        typingsView = createReadOnlyView(panel, text, 'Typings (read-only)');
      } else if (typingsView.state.doc.toString() !== text) {
        typingsView.dispatch({ changes: { from: 0, to: typingsView.state.doc.length, insert: text } });
      }
    },
    async loadPrompt() {
      const response = await ensureOk(await api('/v1/prompt'));
      byId('prompt').textContent = await response.text();
    },
    async loadTools() {
      const response = await ensureOk(await api('/v1/tools'));
      const { tools } = (await response.json()) as { tools: { name: string; description?: string; parameters?: unknown; output?: unknown }[] };
      const items = tools.map((tool) => {
        const li = document.createElement('li');
        li.dataset.testid = 'tool';
        li.dataset.tool = tool.name;
        const details = document.createElement('details');
        const summary = document.createElement('summary');
        const name = document.createElement('code');
        name.textContent = tool.name;
        summary.append(name, ` ${tool.description ?? ''}`);
        const pre = document.createElement('pre');
        pre.textContent = `parameters: ${JSON.stringify(tool.parameters, null, 2)}\n\noutput: ${JSON.stringify(tool.output ?? null, null, 2)}`;
        details.append(summary, pre);
        li.append(details);
        return li;
      });
      byId('tools').replaceChildren(...items);
    },
    async loadEvents(sessionId, fromStart) {
      if (fromStart || cursor === undefined || cursor.sessionId !== sessionId) {
        cursor = { sessionId, after: 0, done: false, paged: true, rest: [] };
      } else if (cursor.done) {
        return;
      }
      const state = cursor;
      const append = !fromStart && state.after !== 0;
      // A server without paging holds the whole log in one answer: show it a page at a time.
      if (!state.paged) {
        const page = state.rest.splice(0, PAGE_SIZE);
        state.done = state.rest.length === 0;
        renderEvents(page, true);
        return;
      }
      const base = `/v1/sessions/${encodeURIComponent(sessionId)}/events?after=${encodeURIComponent(String(state.after))}`;
      let response = await api(`${base}&limit=${PAGE_SIZE}`);
      if (response.status === 400) {
        // This server does not know `limit` (older versions): one answer with every event.
        response = await api(base);
        const { events } = (await ensureOk(response).then((r) => r.json())) as EventsPage;
        state.paged = false;
        state.rest = events.slice(PAGE_SIZE);
        state.done = state.rest.length === 0;
        renderEvents(events.slice(0, PAGE_SIZE), append);
        return;
      }
      const body = (await ensureOk(response).then((r) => r.json())) as EventsPage;
      // A paging server answers `next` (the `after` of the next page) until the end of the log.
      state.done = body.next === null || body.next === undefined;
      if (!state.done) state.after = body.next as number | string;
      renderEvents(body.events, append);
    },
  };
}
