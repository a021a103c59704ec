/**
 * `npm run typecheck` as part of the suite, running beside the other files instead of before all
 * of them: the script as package.json has it (tsc --noEmit over the repository and the
 * playground's projects) exits 0 and prints nothing.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;
const script = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: { typecheck: string } }).scripts.typecheck;

it('npm run typecheck reports nothing', { timeout: 180_000 }, async () => {
  const ran = await new Promise<{ code: number; output: string }>((resolve) => {
    // Its `node` is this one (Node 24), whatever the system's is.
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
    execFile('sh', ['-c', script], { cwd: root, env, timeout: 170_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: `${stdout}${stderr}` });
    });
  });
  expect(ran.output).toBe('');
  expect(ran.code).toBe(0);
});
