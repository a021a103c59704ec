/**
 * `npm start` and `npm test` build the playground first; this skips the
 * build (about 10 s) when playground/dist is newer than every input, so only
 * a fresh clone or a change pays for it.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'vite';

const here = new URL('.', import.meta.url).pathname;
const built = join(here, 'dist', 'index.html');
const inputs = [join(here, 'index.html'), join(here, 'vite.config.ts'), join(here, '..', 'package-lock.json'), join(here, '..', 'typings', 'ambient.ts')];
const walk = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]));

const newestInput = Math.max(...[...inputs, ...walk(join(here, 'src'))].filter(existsSync).map((file) => statSync(file).mtimeMs));
if (existsSync(built) && statSync(built).mtimeMs >= newestInput) {
  console.log('playground: up to date (npm run build:playground rebuilds it)');
} else {
  await build({ configFile: join(here, 'vite.config.ts') });
  console.log('playground: built into playground/dist');
}
