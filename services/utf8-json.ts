/**
 * The JSON body parser: Fastify's own (prototype-poisoning keys refused),
 * behind a strict UTF-8 check. Fastify decodes bytes leniently: without the
 * check, invalid UTF-8 would reach a program as U+FFFD characters instead of
 * failing.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { HttpError } from './http-errors.ts';

export function useStrictUtf8Json(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (!isUtf8(body as Buffer)) {
      done(new HttpError('INVALID_JSON', 'the body is not valid UTF-8: send JSON text encoded as UTF-8'), undefined);
      return;
    }
    parseJson(request, (body as Buffer).toString('utf8'), done);
  });
}
