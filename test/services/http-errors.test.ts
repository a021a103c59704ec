import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HTTP_ERROR_CODES, describeValidation, toHttpError } from '../../services/http-errors.ts';

const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/service.md'), 'utf8');

describe('HTTP error catalogue', () => {
  it('docs/service.md lists every code with its status and fix', () => {
    const table = doc.split('<!-- http-error-codes -->')[1].split('\n\n')[0];
    const rows = [...table.matchAll(/^\| `([A-Z_]+)` \| (\d+) \| (.+) \|$/gm)].map((m) => [m[1], Number(m[2]), m[3]]);
    expect(rows).toEqual(Object.entries(HTTP_ERROR_CODES).map(([code, entry]) => [code, entry.status, entry.fix]));
  });

  it('never passes an unknown error message to the client', () => {
    const mapped = toHttpError(new Error('ENOENT: /etc/secret/path'));
    expect(mapped.statusCode).toBe(500);
    expect(mapped.message).not.toContain('/etc');
  });

  // Fastify's frameworkErrors: the router's refusals, whose own messages echo the path.
  it("maps the router's refusals without echoing the path", () => {
    const tooLong = toHttpError(Object.assign(new Error(`'/v1/sessions/${'b'.repeat(300)}/events' is exceeding the max param length`), { code: 'FST_ERR_MAX_PARAM_LENGTH', statusCode: 414 }));
    expect([tooLong.statusCode, tooLong.code, tooLong.message]).toEqual([414, 'PARAM_TOO_LONG', 'a path parameter is longer than 256 characters: use a shorter id (at most 128 characters) or tool name']);
    const badUrl = toHttpError(Object.assign(new Error("'/v1/sessions/%zz/events' is not a valid url component"), { code: 'FST_ERR_BAD_URL', statusCode: 400 }));
    expect([badUrl.statusCode, badUrl.code]).toEqual([400, 'INVALID_REQUEST']);
    expect(badUrl.message).not.toContain('/v1/');
  });

  // The catalogue of validation sentences: the route tests check only the code and the field.
  it('names fields in validation messages', () => {
    expect(
      describeValidation(
        [
          { keyword: 'required', instancePath: '', params: { missingProperty: 'code' } },
          { keyword: 'additionalProperties', instancePath: '', params: { additionalProperty: 'x' } },
          { keyword: 'type', instancePath: '/timeoutMs', params: { type: 'integer' } },
        ],
        'body',
      ),
    ).toBe('body.code is required; body has unknown field "x": remove it; body.timeoutMs must be integer');
  });
});
