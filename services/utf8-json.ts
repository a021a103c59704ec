/**
 * The JSON body parser: Fastify's own (prototype-poisoning keys refused),
 * behind a strict UTF-8 check and a nesting bound. Fastify decodes bytes
 * leniently: without the check, invalid UTF-8 would reach a program as
 * U+FFFD characters instead of failing. Deep nesting is refused before
 * anything is parsed: parsing a deep body, and the frozen copy its
 * arguments get, hold the event loop for every tenant.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { MAX_BODY_DEPTH } from './config-defaults.ts';
import { HttpError } from './http-errors.ts';

/**
 * Puts this parser on `app` for `application/json` (replacing Fastify's): createServer does; a host
 * that mounts ptcPlugin on its own instance may. Its refusals are HttpErrors (400 `INVALID_JSON`,
 * `BODY_TOO_DEEP`), rendered by the plugin's error handler on its routes, by the host's elsewhere.
 */
export function useStrictUtf8Json(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (!isUtf8(body as Buffer)) {
      done(new HttpError('INVALID_JSON', 'the body is not valid UTF-8: send JSON text encoded as UTF-8'), undefined);
      return;
    }
    if (nestsDeeperThan(body as Buffer, MAX_BODY_DEPTH)) {
      done(new HttpError('BODY_TOO_DEEP', `the JSON body nests deeper than ${MAX_BODY_DEPTH} levels of arrays and objects: send flatter data`), undefined);
      return;
    }
    parseJson(request, (body as Buffer).toString('utf8'), done);
  });
}

/**
 * Whether JSON text nests arrays and objects deeper than `max` levels: one
 * pass over the bytes, string contents (escapes included) skipped. UTF-8
 * continuation bytes are never ASCII, so bytes stand for characters here.
 * Malformed text is not judged: the parser says what is wrong with it.
 */
export function nestsDeeperThan(text: Uint8Array, max: number): boolean {
  const length = text.length;
  let depth = 0;
  for (let i = 0; i < length; i++) {
    const byte = text[i];
    if (byte === QUOTE) {
      // To the closing quote: the byte after a backslash is escaped (so `\\` ends an escape, `\"` is no quote).
      for (i++; i < length; i++) {
        const inner = text[i];
        if (inner === BACKSLASH) i++;
        else if (inner === QUOTE) break;
      }
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
