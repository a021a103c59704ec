import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertSandboxSupported, UnsupportedRuntimeError } from '../../compose/runtime-support.ts';
import { ISOLATE_HOST_FLAGS } from '../../sandbox/host-flags.ts';

const root = new URL('../../', import.meta.url).pathname;
// Loaded before anything else in a child: that process reports itself as Node 20.
const FAKE_NODE_20 = `data:text/javascript,Object.defineProperty(process.versions, 'node', { value: '20.20.2' })`;

interface Exited {
  code: number;
  stdout: string;
  stderr: string;
}

async function node(args: string[]): Promise<Exited> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, args, { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

function caught(check: () => void): UnsupportedRuntimeError {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(UnsupportedRuntimeError);
    return error as UnsupportedRuntimeError;
  }
  throw new Error('expected the check to throw');
}

describe('unsupported runtimes are refused at creation', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptc-runtime-support-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('an older Node: one line naming the Node release needed', () => {
    const error = caught(() => assertSandboxSupported({ nodeVersion: '20.20.2', nativeBuild: () => '/never/asked' }));
    expect(error.code).toBe('UNSUPPORTED_RUNTIME');
    expect(error.message).toContain('needs Node.js 24 or newer, and this is Node.js 20.20.2');
    expect(error.message).not.toContain('\n');
  });

  it('no native build of isolated-vm: one line naming the rebuild', () => {
    const error = caught(() =>
      assertSandboxSupported({
        nodeVersion: '24.9.0',
        nativeBuild: () => {
          throw new Error('No native build was found for platform=linux arch=x64 runtime=node abi=137');
        },
      }),
    );
    expect(error.message).toContain(`isolated-vm has no native build for ${process.platform}-${process.arch} on Node.js 24.9.0`);
    expect(error.message).toContain('npm rebuild isolated-vm');
    expect(error.message).not.toContain('\n');
  });

  it('this host is supported: the real probe finds the native build without complaint', () => {
    expect(() => assertSandboxSupported()).not.toThrow();
  });

  it('createCodeMode on an older Node throws at once and registers nothing', async () => {
    const probe = join(dir, 'create.mts');
    await writeFile(
      probe,
      `import { createCodeMode, createMemoryEventSink, createToolRegistry } from '${root}entries/index.ts';
const registry = createToolRegistry({ eventSink: createMemoryEventSink() });
try {
  createCodeMode({ registry });
  console.log('created');
} catch (error) {
  console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message, tools: registry.schemas().map((tool) => tool.name) }));
}`,
    );
    const { code, stdout } = await node(['--no-node-snapshot', '--import', FAKE_NODE_20, probe]);
    expect(code).toBe(0);
    const refused = JSON.parse(stdout) as { name: string; code: string; message: string; tools: string[] };
    expect(refused).toMatchObject({ name: 'UnsupportedRuntimeError', code: 'UNSUPPORTED_RUNTIME', tools: [] });
    expect(refused.message).toMatch(/^ptc-executor needs Node\.js 24 or newer, and this is Node\.js 20\.20\.2: install Node\.js 24/);
  });

  it('createCodeMode warns once for each host flag the process lacks, naming it; never with them', async () => {
    const probe = join(dir, 'warn.mts');
    await writeFile(
      probe,
      `import { createCodeMode, createMemoryEventSink, createToolRegistry } from '${root}entries/index.ts';
for (let i = 0; i < 2; i++) {
  const codeMode = createCodeMode({ registry: createToolRegistry({ eventSink: createMemoryEventSink() }) });
  await codeMode.close();
}
console.log('created twice');`,
    );
    const without = await node([probe]);
    expect(without.stdout).toBe('created twice\n');
    expect(without.stderr.match(/\[PTC_NO_NODE_SNAPSHOT\].*start it with node --no-node-snapshot/g)).toHaveLength(1);
    expect(without.stderr.match(/\[PTC_WASM_CODE_GC\].*can deadlock the process.*start it with node --no-wasm-code-gc/g)).toHaveLength(1);
    const one = await node(['--no-node-snapshot', probe]);
    expect(one.stderr).not.toContain('PTC_NO_NODE_SNAPSHOT');
    expect(one.stderr).toContain('PTC_WASM_CODE_GC');
    const withFlags = await node([...ISOLATE_HOST_FLAGS, probe]);
    expect(withFlags.stdout).toBe('created twice\n');
    expect(withFlags.stderr).not.toContain('PTC_');
  });

  it('ptc on an older Node exits 1 with that one line on stderr, before running anything', async () => {
    const program = join(dir, 'program.ts');
    await writeFile(program, 'console.log("ran"); return 1;');
    const { code, stdout, stderr } = await node(['--import', FAKE_NODE_20, `${root}services/cli.ts`, 'run', program]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^ptc: ptc-executor needs Node\.js 24 or newer, and this is Node\.js 20\.20\.2/)]);
  });
});
