/**
 * Bounds on what one run can put into a session log. A program controls what
 * its nested calls return and how often it calls them, so the stored copy of
 * rendered content is capped per event and per run before any sink sees it:
 *
 * - one event keeps at most `maxEventContentBytes` of content (the `content`
 *   and error message of a result, the contexts a result carries, the
 *   `content` of an injected `agent/context`); past it the text is cut and a
 *   marker states the original size;
 * - a nested call's `arguments` keep at most `maxEventArgumentBytes`: past it
 *   they become a marker with the full size and the start of their JSON text,
 *   so a short program cannot turn each large argument into a large event;
 * - the nested-call and `agent/context` events of one run keep at most
 *   `maxRunEventBytes` of such content together; past it later events keep
 *   their metadata (ids, name, isError, error code, source) and a marker
 *   instead of their content, so every nested call and inject still leaves
 *   its event.
 *
 * Only the stored event is cut: the program and the caller get results whole.
 */
import type { ContentBlock } from '../content.ts';
import type { NewToolEvent } from '../events.ts';
import type { HookContext } from '../tool.ts';
import type { JsonValue } from '../json.ts';
import { limitsCheck, limitsSchema } from '../schema/limit-rules.ts';

export interface EventCaps {
  /** Bytes (UTF-8) of content one stored event keeps. */
  maxEventContentBytes: number;
  /** Bytes of content the nested-call events of one run keep together. */
  maxRunEventBytes: number;
  /** Bytes (UTF-8) of a nested call's argument JSON one `tool/ptc-dispatch-start` keeps. */
  maxEventArgumentBytes: number;
}

/** The caps' defaults, written once (the service's config descriptions read them). */
export const DEFAULT_EVENT_CAPS: Readonly<EventCaps> = Object.freeze({
  maxEventContentBytes: 1024 * 1024,
  maxRunEventBytes: 4 * 1024 * 1024,
  maxEventArgumentBytes: 64 * 1024,
});

/** What each cap must be, as JSON Schema (a whole number of at least 1); the service's config file builds its keys from it. */
export const EVENT_CAPS_SCHEMA = limitsSchema(DEFAULT_EVENT_CAPS);

const checkCaps = limitsCheck(EVENT_CAPS_SCHEMA);

/** Runs tracked at once; a run whose `tool/result` never came is forgotten oldest first. */
const MAX_TRACKED_RUNS = 10_000;

/** Returns `cap(event)`: the event as it may be stored, counting nested content against its run. */
export function createEventCapper(partial: Partial<EventCaps> = {}): (event: NewToolEvent) => NewToolEvent {
  const caps: EventCaps = {
    maxEventContentBytes: partial.maxEventContentBytes ?? DEFAULT_EVENT_CAPS.maxEventContentBytes,
    maxRunEventBytes: partial.maxRunEventBytes ?? DEFAULT_EVENT_CAPS.maxRunEventBytes,
    maxEventArgumentBytes: partial.maxEventArgumentBytes ?? DEFAULT_EVENT_CAPS.maxEventArgumentBytes,
  };
  const problems = checkCaps(caps);
  if (problems.length > 0) throw new RangeError(`invalid event caps: ${problems.join('; ')}`);
  /** rootCallId → content bytes its nested events have stored so far. */
  const spent = new Map<string, number>();

  return (event) => {
    if (event.type === 'tool/result') {
      spent.delete(event.callId);
      return capResult(event, caps.maxEventContentBytes);
    }
    // Small, bounded records of a durable run's story: stored whole.
    if (event.type === 'run/paused' || event.type === 'run/resumed' || event.type === 'run/reverted') return event;
    const used = spent.get(event.rootCallId) ?? 0;
    if (!spent.has(event.rootCallId) && spent.size >= MAX_TRACKED_RUNS) spent.delete(spent.keys().next().value as string);
    const budget = Math.min(caps.maxEventContentBytes, Math.max(0, caps.maxRunEventBytes - used));
    const overRun = `this run's stored events reached the ${caps.maxRunEventBytes}-byte cap (limits.maxRunEventBytes)`;
    const overEvent = `over the ${caps.maxEventContentBytes}-byte cap for one event (limits.maxEventContentBytes)`;
    if (event.type === 'tool/ptc-dispatch-start') {
      const json = JSON.stringify(event.arguments);
      const bytes = Buffer.byteLength(json);
      const perEvent = Math.min(caps.maxEventContentBytes, caps.maxEventArgumentBytes);
      const argumentBudget = Math.min(budget, perEvent);
      if (bytes <= argumentBudget) {
        spent.set(event.rootCallId, used + bytes);
        return event;
      }
      const why = argumentBudget < perEvent ? overRun : `over the ${perEvent}-byte cap for stored arguments (limits.maxEventArgumentBytes)`;
      const preview = cutText(json, argumentBudget);
      spent.set(event.rootCallId, used + Buffer.byteLength(preview));
      const args: JsonValue = { truncated: `arguments of ${bytes} bytes not stored whole: ${why}`, bytes, preview };
      return { ...event, arguments: args };
    }
    const bytes = contentBytes(event.content);
    if (bytes <= budget) {
      spent.set(event.rootCallId, used + bytes);
      return event;
    }
    spent.set(event.rootCallId, used + budget);
    const why = budget < caps.maxEventContentBytes ? overRun : overEvent;
    return { ...event, content: cutContent(event.content, budget, bytes, why) };
  };
}

function capResult(event: Extract<NewToolEvent, { type: 'tool/result' }>, max: number): NewToolEvent {
  const bytes = contentBytes(event.content);
  const message = event.error?.message;
  const messageBytes = message === undefined ? 0 : Buffer.byteLength(message);
  const contexts = event.additionalContexts;
  const contextBytes = contexts === undefined ? 0 : contextsBytes(contexts);
  if (bytes <= max && messageBytes <= max && contextBytes <= max) return event;
  const capped = { ...event };
  if (contexts !== undefined && contextBytes > max) {
    capped.additionalContexts = cutContexts(contexts, max, contextBytes, `over the ${max}-byte cap for one event (limits.maxEventContentBytes)`);
  }
  const why = `over the ${max}-byte cap for one event (limits.maxEventContentBytes)`;
  if (bytes > max) capped.content = cutContent(event.content, max, bytes, why);
  if (message !== undefined && event.error !== undefined && messageBytes > max) {
    capped.error = { ...event.error, message: `${cutText(message, max)}\n[message of ${messageBytes} bytes truncated: ${why}]` };
  }
  return capped;
}

function contextBytesOf(context: HookContext): number {
  return typeof context.content === 'string' ? Buffer.byteLength(context.content) : contentBytes(context.content);
}

function contextsBytes(contexts: readonly HookContext[]): number {
  let total = 0;
  for (const context of contexts) total += contextBytesOf(context);
  return total;
}

/** Keeps whole contexts while they fit; one last context says how many were not stored. */
function cutContexts(contexts: readonly HookContext[], budget: number, bytes: number, why: string): HookContext[] {
  const kept: HookContext[] = [];
  let left = budget;
  for (const context of contexts) {
    const size = contextBytesOf(context);
    if (size > left) break;
    kept.push(context);
    left -= size;
  }
  const dropped = contexts.length - kept.length;
  const text = `[${dropped} of ${contexts.length} contexts not stored: ${bytes} bytes in all, ${budget} kept; ${why}]`;
  kept.push({ content: [{ type: 'text', text }], source: 'ptc-executor' });
  return kept;
}

/** UTF-8 bytes of the text and data a list of blocks carries. */
function contentBytes(content: readonly ContentBlock[]): number {
  let total = 0;
  for (const block of content) total += blockBytes(block);
  return total;
}

function blockBytes(block: ContentBlock): number {
  switch (block.type) {
    case 'text':
      return Buffer.byteLength(block.text);
    case 'image':
    case 'audio':
      return block.data.length;
    case 'resource':
      return 'text' in block.resource ? Buffer.byteLength(block.resource.text) : block.resource.blob.length;
    default:
      return Buffer.byteLength(JSON.stringify(block));
  }
}

/** Keeps whole blocks while they fit, cuts a text block that crosses the budget, and ends with a marker. */
function cutContent(content: readonly ContentBlock[], budget: number, bytes: number, why: string): ContentBlock[] {
  const kept: ContentBlock[] = [];
  let left = budget;
  for (const block of content) {
    const size = blockBytes(block);
    if (size <= left) {
      kept.push(block);
      left -= size;
      continue;
    }
    if (block.type === 'text' && left > 0) kept.push({ type: 'text', text: cutText(block.text, left) });
    break;
  }
  const blocks = content.length === 1 ? '1 block' : `${content.length} blocks`;
  kept.push({ type: 'text', text: `[content truncated: ${bytes} bytes in ${blocks}, ${budget} kept; ${why}]` });
  return kept;
}

function cutText(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  const cut = Buffer.from(text.slice(0, maxBytes), 'utf8').subarray(0, maxBytes).toString('utf8');
  return cut.endsWith('\uFFFD') && !text.startsWith(cut) ? cut.slice(0, -1) : cut;
}
