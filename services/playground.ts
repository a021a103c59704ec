/**
 * Serves the playground page (built by `npm run build:playground` into
 * playground/dist) at `/` and `/playground`, its hashed assets under
 * `/playground/assets/`. The page and its assets need no token (they hold no
 * data; every API call the page makes carries one). Files are read once at
 * start-up into memory with their precompressed .br/.gz twins, and only names
 * in that table are served: no path from a request ever reaches the disk.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './http-errors.ts';

/**
 * Scripts, styles and workers from the page's own origin only, no inline
 * script, no framing; API calls to the same origin only. `styleNonce`: the
 * editor's base styles are one <style> element carrying this response's nonce.
 */
export function playgroundCsp(styleNonce?: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "worker-src 'self'",
    styleNonce === undefined ? "style-src 'self'" : `style-src 'self' 'nonce-${styleNonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The placeholder the build writes where each page response gets a fresh nonce (playground/vite.config.ts). */
const NONCE_PLACEHOLDER = 'PTC_CSP_NONCE';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served without a token (auth.ts), otherwise like any route: the playground page and its assets. */
    public?: boolean;
  }
}

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
} as const;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
};

interface Asset {
  type: string;
  raw: Buffer;
  gzip?: Buffer;
  br?: Buffer;
}

/** Shown when the page was not built (an install that skipped `npm run build:playground`). */
const NOT_BUILT = `<!doctype html><html lang="en"><meta charset="utf-8"><title>ptc playground</title>
<body><h1>ptc playground</h1><p>The playground page is not built. Run <code>npm run build:playground</code>
(<code>npm start</code> does it first) and reload. The API is served as usual: see <a href="/docs/json">/docs/json</a>.</p></body></html>`;

/** Where the built page is: next to services/ when run from source, two levels up from dist/services/. */
export function defaultPlaygroundDir(): string {
  const candidates = ['../playground/dist', '../../playground/dist'].map((relative) => fileURLToPath(new URL(relative, import.meta.url)));
  return candidates.find((dir) => existsSync(join(dir, 'index.html'))) ?? candidates[0];
}

function loadAssets(dir: string): { index: Asset | undefined; assets: Map<string, Asset> } {
  const read = (file: string): Asset | undefined => {
    const extension = file.slice(file.lastIndexOf('.'));
    const type = TYPES[extension];
    if (type === undefined || !existsSync(file)) return undefined;
    const twin = (suffix: string) => (existsSync(file + suffix) ? readFileSync(file + suffix) : undefined);
    return { type, raw: readFileSync(file), gzip: twin('.gz'), br: twin('.br') };
  };
  const assets = new Map<string, Asset>();
  const assetDir = join(dir, 'assets');
  if (existsSync(assetDir)) {
    for (const name of readdirSync(assetDir)) {
      const asset = read(join(assetDir, name));
      if (asset !== undefined) assets.set(name, asset);
    }
  }
  return { index: read(join(dir, 'index.html')), assets };
}

/** br when the client takes it, else gzip, else the bytes as they are. */
function send(request: FastifyRequest, reply: FastifyReply, asset: Asset, cacheControl: string): FastifyReply {
  const accepted = String(request.headers['accept-encoding'] ?? '');
  const takes = (coding: string) =>
    accepted.split(',').some((part) => {
      const [name, ...params] = part.split(';').map((text) => text.trim().toLowerCase());
      const q = params.find((param) => param.startsWith('q='));
      return name === coding && (q === undefined || Number(q.slice(2)) > 0);
    });
  let body = asset.raw;
  if (asset.br !== undefined && takes('br')) {
    body = asset.br;
    void reply.header('content-encoding', 'br');
  } else if (asset.gzip !== undefined && takes('gzip')) {
    body = asset.gzip;
    void reply.header('content-encoding', 'gzip');
  }
  return reply.headers(SECURITY_HEADERS).header('content-security-policy', playgroundCsp()).header('vary', 'accept-encoding').header('cache-control', cacheControl).type(asset.type).send(body);
}

export interface PlaygroundOptions {
  /** The built page. Default: {@link defaultPlaygroundDir}. */
  dir?: string;
}

/** Mounts the page's routes on `app` (the root instance of `createServer`). */
export function registerPlayground(app: FastifyInstance, options: PlaygroundOptions = {}): void {
  const { index, assets } = loadAssets(options.dir ?? defaultPlaygroundDir());
  const template = index?.raw.toString('utf8') ?? NOT_BUILT;
  const page = async (_request: FastifyRequest, reply: FastifyReply) => {
    const nonce = randomBytes(18).toString('base64');
    // A fresh nonce per response, so the page is never cached (it is 4 kB).
    return reply
      .headers(SECURITY_HEADERS)
      .header('content-security-policy', playgroundCsp(nonce))
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(template.replaceAll(NONCE_PLACEHOLDER, nonce));
  };
  // `public`: the auth hook (auth.ts) lets these through without a token.
  for (const url of ['/', '/playground', '/playground/']) app.get(url, { schema: { hide: true }, config: { public: true } }, page);
  app.get('/playground/assets/:file', { schema: { hide: true }, config: { public: true } }, async (request, reply) => {
    const { file } = request.params as { file: string };
    const asset = assets.get(file);
    if (asset === undefined) throw new HttpError('NOT_FOUND', `no playground asset "${file}": reload the page to get the current asset names`);
    // Names carry a content hash: a new build has new names.
    return send(request, reply, asset, 'public, max-age=31536000, immutable');
  });
}
