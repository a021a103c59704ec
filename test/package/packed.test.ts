/**
 * The package as a user gets it: `npm pack` from a copy of this repository
 * (its `prepack` builds dist/ and the playground there), installed from the
 * tarball into a fresh project, and used from that project only: the README's
 * library example, `npx ptc`, `ptc run`, and `ptc serve` with its playground
 * page. Packing and installing are done once for the file.
 */
import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveCli, type ServedCli } from '../helpers/serve-cli.ts';

const root = new URL('../../', import.meta.url).pathname;
/**
 * Build output and local state: the copy builds its own dist/. The playground's build is copied
 * with its times, so prepack rebuilds it only when it is older than its sources (as npm test's
 * pretest leaves it current, that is one playground build per suite, not two).
 */
const NOT_COPIED = new Set(['node_modules', '.git', 'dist', 'test/playground/artifacts', '.ptc', 'workspace', 'coverage']);
/** Packing builds the library and the playground, and installing resolves the dependencies (from npm's cache when it has them). */
const PREPARE_MS = 300_000;
/** Each command starts a Node process or two, which a loaded machine can make slow. */
const COMMAND_MS = 120_000;
/** In-process isolates: a run or a server start does not wait for sandbox processes to start. */
const RUNTIME = ['--runtime', 'in-process'];

// npm and the bins it installs run on this Node (24), whatever the system's is. The npm_* variables
// of an `npm test` around this run would point the child npm at this repository.
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_')));
env.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(command: string, args: string[], cwd: string, timeout = COMMAND_MS): Promise<Ran> {
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args, { cwd, env, timeout, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; signal?: string; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: `${failed.stderr ?? ''}${failed.signal === undefined ? '' : ` (killed by ${failed.signal})`}` };
  }
}

async function succeed(command: string, args: string[], cwd: string, timeout?: number): Promise<string> {
  const ran = await run(command, args, cwd, timeout);
  if (ran.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${ran.code}:\n${ran.stderr.slice(-4000)}`);
  return ran.stdout;
}

describe('the packed package, installed into a fresh project', () => {
  let dir: string;
  let project: string;
  let tarballFiles: string[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptc-packed-'));
    const source = join(dir, 'source');
    await cp(root, source, { recursive: true, preserveTimestamps: true, filter: (from) => !NOT_COPIED.has(relative(root, from)) });
    await symlink(realpathSync(join(root, 'node_modules')), join(source, 'node_modules'));
    await succeed('npm', ['pack', '--pack-destination', dir], source, PREPARE_MS);
    const tarball = (await readdir(dir)).find((name) => name.endsWith('.tgz'));
    if (tarball === undefined) throw new Error(`npm pack left no tarball in ${dir}`);
    tarballFiles = (await succeed('tar', ['-tzf', join(dir, tarball)], dir)).split('\n').filter((line) => line !== '');

    project = join(dir, 'project');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'fresh-project', private: true, type: 'module' }));
    await succeed('npm', ['install', join(dir, tarball), '--no-audit', '--no-fund', '--prefer-offline'], project, PREPARE_MS);
  }, 2 * PREPARE_MS);

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('ships the built library, the built playground, the config schema and the docs it names; no tests, benches or sources', () => {
    expect(tarballFiles).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/README.md',
        'package/LICENSE',
        'package/SECURITY.md',
        'package/docs/ptc.config.schema.json',
        'package/dist/entries/index.js',
        'package/dist/entries/index.d.ts',
        'package/dist/services/cli.js',
        'package/dist/sandbox/guest/bootstrap.js',
        'package/playground/dist/index.html',
      ]),
    );
    const unwanted = tarballFiles.filter(
      (file) => /^package\/(test|bench|src|sandbox|services|compose|typings|adapters|entries|playground\/src|deploy)\//.test(file) || /(?<!\.d)\.ts$|\.map$/.test(file),
    );
    expect(unwanted).toEqual([]);
  });

  it("runs the README's library example and prints what its comment promises", { timeout: COMMAND_MS }, async () => {
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    const example = /## Use it as a library\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    await writeFile(join(project, 'example.ts'), example!);
    const stdout = await succeed(process.execPath, ['example.ts'], project);
    expect(stdout.trim()).toBe(/console\.log\(.*\); \/\/ (.*)\n/.exec(example!)?.[1]);
  });

  it('npx -p ptc-executor ptc --help finds the installed bin', { timeout: COMMAND_MS }, async () => {
    const stdout = await succeed('npx', ['-p', 'ptc-executor', 'ptc', '--help'], project);
    expect(stdout).toMatch(/^Usage: ptc \[options\] \[command\]/);
    expect(stdout).toContain('serve [options]');
  });

  it('ptc run runs a program and prints its logs and result', { timeout: COMMAND_MS }, async () => {
    await mkdir(join(project, 'workspace'));
    await writeFile(join(project, 'workspace/notes.txt'), 'hello');
    await writeFile(join(project, 'program.ts'), 'const paths: string[] = (await tools.glob({ pattern: "*.txt" })).paths;\nconsole.log("found", paths.length);\nreturn paths;');
    const stdout = await succeed(join(project, 'node_modules/.bin/ptc'), ['run', 'program.ts', ...RUNTIME], project);
    expect(stdout).toBe('found 1\n[\n  "notes.txt"\n]\n');
  });

  it('ptc serve serves the built playground page and /healthz', { timeout: COMMAND_MS }, async () => {
    let served: ServedCli | undefined;
    try {
      served = await serveCli({ cwd: project, cli: join(project, 'node_modules/ptc-executor/dist/services/cli.js'), nodeFlags: [], args: RUNTIME });
      const page = await fetch(`${served.url}/`);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).not.toContain('not built');
      const script = /<script type="module"[^>]*src="([^"]+)"/.exec(html)?.[1];
      expect(script).toMatch(/\/assets\/index-[^/]*\.js$/);
      expect((await fetch(`${served.url}${script}`)).status).toBe(200);
      const health = await fetch(`${served.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
    } finally {
      await served?.stop();
    }
  });
});
