/**
 * The context channel's checks: a context from a post-execute hook
 * (`additionalContexts`) or from `exec.agent.inject` is read defensively
 * and copied into a frozen shape whose content is always content blocks, so
 * everything downstream (results, events, responses) handles one form.
 */
import type { ContentBlock } from './content.ts';
import { checkContent } from './project-output.ts';
import type { HookContext, InjectedContext } from './tool.ts';

/** Longest `source` (a hook's label, an injecting plugin's name) kept. */
export const MAX_CONTEXT_SOURCE_LENGTH = 256;

/** Copies one context's content; returns the frozen blocks or what is wrong. */
function readContent(raw: unknown, where: string): ContentBlock[] | string {
  if (typeof raw === 'string') return Object.freeze([Object.freeze({ type: 'text', text: raw })]) as unknown as ContentBlock[];
  return checkContent(raw, `${where}.content`);
}

function readSource(raw: unknown, where: string): string | undefined | { error: string } {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw === '' || raw.length > MAX_CONTEXT_SOURCE_LENGTH) {
    return { error: `${where}.source must be a non-empty string of at most ${MAX_CONTEXT_SOURCE_LENGTH} characters (or omitted)` };
  }
  return raw;
}

/**
 * Reads a hook's `additionalContexts`: a frozen array of frozen contexts
 * with block content, or a message naming the first problem.
 */
export function readHookContexts(raw: unknown): HookContext[] | string {
  try {
    if (!Array.isArray(raw)) return 'additionalContexts must be an array of { content, source? }';
    const out: HookContext[] = [];
    for (let i = 0; i < raw.length; i++) {
      const where = `additionalContexts[${i}]`;
      const item: unknown = raw[i];
      if (typeof item !== 'object' || item === null) return `${where} must be an object { content, source? }`;
      const { content: rawContent, source: rawSource } = item as { content?: unknown; source?: unknown };
      const content = readContent(rawContent, where);
      if (typeof content === 'string') return content;
      const source = readSource(rawSource, where);
      if (typeof source === 'object') return source.error;
      out.push(Object.freeze(source === undefined ? { content } : { content, source }));
    }
    return Object.freeze(out) as HookContext[];
  } catch {
    return 'additionalContexts could not be read (a getter threw)';
  }
}

/**
 * Reads the argument of `exec.agent.inject`; throws a `TypeError` saying
 * what to pass instead (a malformed context is a bug in the tool).
 */
export function readInjectedContext(raw: unknown): InjectedContext {
  const usage = "pass { content: string | ContentBlock[], source: { kind: 'plugin', plugin: '<name>' } }";
  let content: ContentBlock[] | string;
  let plugin: unknown;
  try {
    if (typeof raw !== 'object' || raw === null) throw new TypeError(`agent.inject needs a context object: ${usage}`);
    const { content: rawContent, source } = raw as { content?: unknown; source?: unknown };
    content = readContent(rawContent, 'context');
    const s = (typeof source === 'object' && source !== null ? source : {}) as { kind?: unknown; plugin?: unknown };
    if (s.kind !== 'plugin') throw new TypeError(`agent.inject: context.source.kind must be 'plugin': ${usage}`);
    plugin = s.plugin;
  } catch (error) {
    if (error instanceof TypeError) throw error;
    throw new TypeError(`agent.inject could not read its context (a getter threw): ${usage}`);
  }
  if (typeof content === 'string') throw new TypeError(`agent.inject: ${content}: ${usage}`);
  if (typeof plugin !== 'string' || plugin === '' || plugin.length > MAX_CONTEXT_SOURCE_LENGTH) {
    throw new TypeError(`agent.inject: context.source.plugin must be a non-empty string of at most ${MAX_CONTEXT_SOURCE_LENGTH} characters: ${usage}`);
  }
  return Object.freeze({ content, source: Object.freeze({ kind: 'plugin' as const, plugin }) });
}
