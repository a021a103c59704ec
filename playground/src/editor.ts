/**
 * The program editor: CodeMirror 6 in TypeScript mode, with completions,
 * diagnostics, hover and signature help from the TypeScript worker.
 */
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap, type Completion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { javascript } from '@codemirror/lang-javascript';
import { bracketMatching, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { linter, lintKeymap, type Diagnostic } from '@codemirror/lint';
import { EditorState, Prec, StateEffect, StateField, type Extension } from '@codemirror/state';
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  hoverTooltip,
  keymap,
  lineNumbers,
  showTooltip,
  ViewPlugin,
  type Tooltip,
  type ViewUpdate,
} from '@codemirror/view';
import { classHighlighter } from '@lezer/highlight';
import type { TsClient } from './ts-client.ts';

const KIND_TYPES: Record<string, string> = {
  property: 'property',
  method: 'method',
  function: 'function',
  'local function': 'function',
  var: 'variable',
  let: 'variable',
  const: 'constant',
  'local var': 'variable',
  parameter: 'variable',
  keyword: 'keyword',
  class: 'class',
  interface: 'interface',
  type: 'type',
  enum: 'enum',
  module: 'namespace',
};

/** The per-response nonce the page's CSP allows CodeMirror's <style> element with. */
const cspNonce = EditorView.cspNonce.of(document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce ?? '');

function tooltipDom(text: string, testId: string): HTMLElement {
  const dom = document.createElement('div');
  dom.className = 'ts-tooltip';
  dom.dataset.testid = testId;
  dom.textContent = text;
  return dom;
}

function completionSource(ts: TsClient, typesLoaded: Promise<void>) {
  return async (context: CompletionContext): Promise<CompletionResult | null> => {
    await typesLoaded;
    const word = context.matchBefore(/[\w$]*/);
    const before = context.state.sliceDoc(context.pos - 1, context.pos);
    if (!context.explicit && word?.from === word?.to && !/[.{,(]/.test(before)) return null;
    const found = await ts.request({ op: 'completions', code: context.state.doc.toString(), pos: context.pos });
    if (found === null || context.aborted) return null;
    const options: Completion[] = found.entries.map((entry, index) => ({
      label: entry.name,
      apply: entry.insertText,
      type: KIND_TYPES[entry.kind] ?? 'text',
      detail: entry.detail !== undefined && entry.detail.length > 80 ? `${entry.detail.slice(0, 79)}…` : entry.detail,
      info: entry.info,
      boost: -index / found.entries.length,
    }));
    return { from: word?.from ?? context.pos, options, validFor: /^[\w$]*$/ };
  };
}

function diagnosticsSource(ts: TsClient, typesLoaded: Promise<void>) {
  return async (view: EditorView): Promise<Diagnostic[]> => {
    // Before the typings, every `tools.` would be "Cannot find name": nothing to say yet.
    await typesLoaded;
    const code = view.state.doc.toString();
    const found = await ts.request({ op: 'diagnostics', code });
    // Stale: the text changed while the worker was checking.
    if (view.state.doc.toString() !== code) return [];
    return found.map((d) => ({ from: d.from, to: Math.max(d.to, d.from), severity: d.severity, message: d.message, source: 'ts' }));
  };
}

/** Dispatched when the worker has new typings: the linter runs again though the text did not change. */
const typingsChanged = StateEffect.define<null>();

const setSignature = StateEffect.define<Tooltip | null>();
const signatureField = StateField.define<Tooltip | null>({
  create: () => null,
  update(value, tr) {
    for (const effect of tr.effects) if (effect.is(setSignature)) return effect.value;
    return tr.docChanged || tr.selection ? (value === null ? null : { ...value, pos: tr.changes.mapPos(value.pos) }) : value;
  },
  provide: (field) => showTooltip.from(field),
});

/** Asks for the signature of the call around the cursor after each edit or move. */
function signatureHelp(ts: TsClient): Extension {
  return [
    signatureField,
    ViewPlugin.fromClass(
      class {
        private timer: ReturnType<typeof setTimeout> | undefined;
        constructor(private readonly view: EditorView) {}
        update(update: ViewUpdate) {
          if (!update.docChanged && !update.selectionSet) return;
          clearTimeout(this.timer);
          this.timer = setTimeout(() => void this.refresh(), 120);
        }
        async refresh() {
          const state = this.view.state;
          const pos = state.selection.main.head;
          const found = await ts.request({ op: 'signature', code: state.doc.toString(), pos }).catch(() => null);
          if (this.view.state !== state) return;
          const tooltip: Tooltip | null =
            found === null ? null : { pos, above: true, strictSide: false, create: () => ({ dom: tooltipDom(found.text, 'signature') }) };
          this.view.dispatch({ effects: setSignature.of(tooltip) });
        }
        destroy() {
          clearTimeout(this.timer);
        }
      },
    ),
  ];
}

export interface ProgramEditor {
  readonly view: EditorView;
  getCode(): string;
  setCode(code: string): void;
  /** Moves the cursor to a 1-based line and column, scrolls there and focuses the editor. */
  goTo(line: number, column: number): void;
  /** Re-runs diagnostics (after the typings changed). */
  relint(): void;
}

export interface EditorOptions {
  parent: HTMLElement;
  doc: string;
  ts: TsClient;
  /** Resolves once the worker has the typings: completions and diagnostics wait for it. */
  typesLoaded: Promise<void>;
  onRun(): void;
  onChange?(code: string): void;
}

export function createEditor(options: EditorOptions): ProgramEditor {
  const { ts, parent } = options;
  // The cursor as data-cursor="line:column" on the editor element, for tests and scripts.
  const cursorAttribute = EditorView.updateListener.of((update) => {
    if (update.selectionSet || update.docChanged) {
      const head = update.state.selection.main.head;
      const line = update.state.doc.lineAt(head);
      parent.dataset.cursor = `${line.number}:${head - line.from + 1}`;
    }
    if (update.docChanged) options.onChange?.(update.state.doc.toString());
  });
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.doc,
      extensions: [
        cspNonce,
        Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => (options.onRun(), true), preventDefault: true }])),
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        closeBrackets(),
        javascript({ typescript: true }),
        syntaxHighlighting(classHighlighter),
        autocompletion({ override: [completionSource(ts, options.typesLoaded)], activateOnTypingDelay: 50 }),
        linter(diagnosticsSource(ts, options.typesLoaded), {
          delay: 300,
          needsRefresh: (update) => update.transactions.some((tr) => tr.effects.some((effect) => effect.is(typingsChanged))),
        }),
        hoverTooltip(async (hoverView, pos) => {
          const found = await ts.request({ op: 'quickInfo', code: hoverView.state.doc.toString(), pos }).catch(() => null);
          return found === null ? null : { pos: found.from, end: found.to, above: true, create: () => ({ dom: tooltipDom(found.text, 'hover') }) };
        }),
        signatureHelp(ts),
        // Tab is left to move focus (keyboard users can leave the editor); indentation follows brackets.
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap, ...lintKeymap]),
        EditorView.contentAttributes.of({ 'aria-label': 'Program (TypeScript): the body of an async function; Ctrl/Cmd+Enter runs it' }),
        cursorAttribute,
      ],
    }),
  });
  parent.dataset.cursor = '1:1';
  return {
    view,
    getCode: () => view.state.doc.toString(),
    setCode(code) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code }, selection: { anchor: 0 } });
    },
    goTo(line, column) {
      const doc = view.state.doc;
      const target = doc.line(Math.max(1, Math.min(line, doc.lines)));
      const pos = Math.min(target.from + Math.max(0, column - 1), target.to);
      view.dispatch({ selection: { anchor: pos }, scrollIntoView: true });
      view.focus();
    },
    relint: () => view.dispatch({ effects: typingsChanged.of(null) }),
  };
}

/** A read-only editor for the typings tab, highlighted as TypeScript. */
export function createReadOnlyView(parent: HTMLElement, doc: string, label: string): EditorView {
  return new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        cspNonce,
        lineNumbers(),
        EditorState.readOnly.of(true),
        javascript({ typescript: true }),
        syntaxHighlighting(classHighlighter),
        EditorView.contentAttributes.of({ 'aria-label': label }),
        keymap.of(defaultKeymap),
      ],
    }),
  });
}
