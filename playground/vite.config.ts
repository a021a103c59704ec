/**
 * Builds the playground page into playground/dist: hashed assets under
 * /playground/assets/, each also written gzip- and brotli-compressed so the
 * service sends them compressed without compressing per request.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const here = new URL('.', import.meta.url).pathname;
const outDir = join(here, 'dist');

/** Written next to each asset: `x.js.gz`, `x.js.br`, and a size report. */
function precompress(): Plugin {
  return {
    name: 'ptc-precompress',
    apply: 'build',
    closeBundle() {
      const report: Record<string, { raw: number; gzip: number; br: number }> = {};
      const walk = (dir: string): string[] =>
        readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]));
      for (const file of walk(outDir)) {
        if (!/\.(js|css|html|svg|json)$/.test(file)) continue;
        const raw = readFileSync(file);
        const gz = gzipSync(raw, { level: 9 });
        // Quality 9 is within a few percent of 11 at a fraction of the build time.
        const br = brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length } });
        writeFileSync(`${file}.gz`, gz);
        writeFileSync(`${file}.br`, br);
        report[file.slice(outDir.length + 1)] = { raw: raw.length, gzip: gz.length, br: br.length };
      }
      writeFileSync(join(outDir, 'sizes.json'), `${JSON.stringify(report, null, 2)}\n`);
    },
  };
}

export default defineConfig({
  root: here,
  base: '/playground/',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    // No inline polyfill script: the page's CSP allows no inline script.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 4096,
    reportCompressedSize: false,
    // Plugin timings only say the machine was busy; the precompress step's cost is known.
    rolldownOptions: { checks: { pluginTimings: false } },
  },
  // CodeMirror injects its base styles as a <style> element: the service swaps
  // this placeholder for a fresh nonce in each page response (services/playground.ts).
  html: { cspNonce: 'PTC_CSP_NONCE' },
  worker: { format: 'es', rolldownOptions: { checks: { pluginTimings: false } } },
  plugins: [precompress()],
});
