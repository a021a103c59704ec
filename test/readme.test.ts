import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ISOLATE_HOST_FLAGS } from '../sandbox/host-flags.ts';

// Drift test: the README's library example runs as written and prints what its comment says.
it('the README library example runs and prints the value its comment promises', async () => {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  const example = /## Use it as a library\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(example).toBeDefined();
  const entry = pathToFileURL(new URL('../entries/index.ts', import.meta.url).pathname).href;
  const dir = await mkdtemp(join(tmpdir(), 'ptc-readme-'));
  try {
    const file = join(dir, 'example.mts');
    await writeFile(file, example!.replace("from 'ptc-executor'", `from '${entry}'`));
    const { stdout } = await promisify(execFile)(process.execPath, [...ISOLATE_HOST_FLAGS, file], { timeout: 20_000 });
    const promised = /console\.log\(.*\); \/\/ (.*)\n/.exec(example!)?.[1];
    expect(stdout.trim()).toBe(promised);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
