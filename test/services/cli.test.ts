import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUEST_FREEZE_FLAGS } from '../../sandbox/guest-tiering.ts';
import { ISOLATE_HOST_FLAGS } from '../../sandbox/host-flags.ts';
import { FORCED_MARKING } from '../helpers/forced-marking.ts';
import { buildProgram } from '../../services/cli-main.ts';
import { loadConfig } from '../../services/config.ts';
import { serveMcpStdio } from '../../services/mcp-stdio.ts';
import { runCli, serveCli, type FinishedCli } from '../helpers/serve-cli.ts';
import { post, readSse, tempDir } from './helpers.ts';

/** Runs `node services/cli.ts …` without --no-node-snapshot: the CLI must add it itself. */
async function ptc(args: string[], options: { stdin?: string; cwd?: string } = {}): Promise<FinishedCli> {
  return runCli(args, { nodeFlags: [], cwd: options.cwd ?? (await tempDir('ptc-cli-')), ...(options.stdin === undefined ? {} : { stdin: options.stdin }) });
}

describe('ptc CLI', () => {
  it('ptc run prints logs and the result; exit 0', async () => {
    const cwd = await tempDir('ptc-cli-');
    await writeFile(path.join(cwd, 'program.ts'), `const n: number = 2;\nconsole.log('hello');\nreturn { n };\n`);
    const result = await ptc(['run', 'program.ts', '--runtime', 'in-process'], { cwd });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('hello\n{\n  "n": 2\n}\n');
    expect(result.code).toBe(0);
  });

  it('ptc run - reads stdin; a failing program exits 1 with the error on stderr', async () => {
    const result = await ptc(['run', '-', '--runtime', 'in-process'], { stdin: `console.log('partial');\nthrow new Error('nope');` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('nope');
    expect(result.stderr).toContain('code run failed (exception)');
  });

  it('ptc run: a run that pauses for an approval exits 1 and says it cannot wait for one', async () => {
    const cwd = await tempDir('ptc-cli-');
    await writeFile(path.join(cwd, 'ptc.config.json'), JSON.stringify({ approvals: [{ tools: 'write', when: 'always' }] }));
    const program = `console.log('before');\nawait tools.write({ file_path: 'z.txt', content: 'x' });\nreturn 1;`;
    const result = await ptc(['run', '-', '--runtime', 'in-process'], { cwd, stdin: program });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('before\n');
    expect(result.stderr).toContain('the run paused: tools.write (call #1) needs a person');
    expect(result.stderr).toContain('ptc run cannot wait for one');
    await expect(readFile(path.join(cwd, 'workspace', 'z.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  // A `ptc run` child once ended by a signal instead of exiting 1 here. Its cause: the runtime's
  // close dropped isolated-vm objects just before the event loop ended, and when V8's marking was
  // under way at exit, isolated-vm aborted the process (sandbox/exit-collection.ts). Forced marking
  // makes that state certain: without the collection at exit, both runs end by SIGABRT.
  it('ptc run exits by its own code, not a signal, with V8 marking under way at exit', { timeout: 60_000 }, async () => {
    const cwd = await tempDir('ptc-cli-');
    const failing = await runCli(['run', '-', '--runtime', 'in-process'], { cwd, nodeFlags: FORCED_MARKING, stdin: `console.log('partial');\nthrow new Error('nope');` });
    expect({ code: failing.code, signal: failing.signal }).toEqual({ code: 1, signal: null });
    expect(failing.stderr).toContain('code run failed (exception)');
    const passing = await runCli(['run', '-', '--runtime', 'in-process'], { cwd, nodeFlags: FORCED_MARKING, stdin: 'return 1 + 1;' });
    expect({ code: passing.code, signal: passing.signal, stdout: passing.stdout }).toEqual({ code: 0, signal: null, stdout: '2\n' });
  });

  it('ptc typings prints the declarations; ptc tools lists the tools', async () => {
    const typings = await ptc(['typings']);
    expect(typings.code).toBe(0);
    expect(typings.stdout).toContain('declare const tools');
    expect(typings.stdout).toContain('interface ToolArgsMap');
    const tools = await ptc(['tools']);
    expect(tools.code).toBe(0);
    expect(tools.stdout.split('\n').map((line) => line.split('\t')[0])).toEqual(expect.arrayContaining(['read', 'grep', 'run_code']));
  });

  it('--help documents every option with its default and env var', async () => {
    const help = await ptc(['serve', '--help']);
    expect(help.code).toBe(0);
    for (const text of ['--port', 'default: 7700', 'PTC_PORT', '--host', 'PTC_HOST', '--token', 'PTC_TOKEN', '--workspace', 'PTC_WORKSPACE', '--data', 'PTC_DATA', '--config', 'PTC_CONFIG', '--runtime', 'PTC_RUNTIME', '--mode', 'PTC_MODE']) {
      expect(help.stdout).toContain(text);
    }
    // The serving commands take where they keep state; the others keep it in memory and do not offer it.
    const helpOf = (name: string) => buildProgram().commands.find((command) => command.name() === name)?.helpInformation() ?? '';
    for (const text of ['--data', 'PTC_DATA', '--database-url', 'PTC_DATABASE_URL', '--typings-budget']) expect(helpOf('mcp')).toContain(text);
    for (const name of ['run', 'typings', 'tools']) expect(helpOf(name)).not.toMatch(/--data|--database-url/);
  });

  it('ptc run and ptc mcp refuse a workspace holding the config file (ptc run: exit 2)', async () => {
    const cwd = await tempDir('ptc-cli-');
    await writeFile(path.join(cwd, 'ptc.config.json'), '{}');
    const refusal = `the config file ${path.join(cwd, 'ptc.config.json')} is inside the workspace`;
    const result = await ptc(['run', '-', '--workspace', '.', '--runtime', 'in-process'], { cwd, stdin: 'return 1;' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(refusal);
    // ptc mcp checks before it opens anything (the same CLI path turns the error into exit 2).
    const config = loadConfig({ cwd, env: {}, flags: { workspace: '.', data: path.join(await tempDir('ptc-cli-'), 'data') } });
    await expect(serveMcpStdio(config)).rejects.toThrow(refusal);
  });

  it('a bad config is a clear error, exit 2', async () => {
    const cwd = await tempDir('ptc-cli-');
    await writeFile(path.join(cwd, 'ptc.config.json'), JSON.stringify({ prot: 1 }));
    const result = await ptc(['tools'], { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown key "prot"');
  });

  it('serve with a bad config exits 2 before listening, and says why on stderr', async () => {
    const cwd = await tempDir('ptc-cli-');
    await writeFile(path.join(cwd, 'ptc.config.json'), JSON.stringify({ prot: 1 }));
    await expect(serveCli({ cwd })).rejects.toThrow(/ptc serve exited \(2\) before listening; the end of its stderr:\n[^]*unknown key "prot"/);
  });

  it('serve adds its Node flags; SIGTERM lets an in-flight run finish, keeps its events and exits 0', async () => {
    const cwd = await tempDir('ptc-cli-');
    const server = await serveCli({ cwd, nodeFlags: ['--no-node-snapshot'], args: ['--runtime', 'in-process', '--log-level', 'warn'] });
    // The CLI re-executed itself in place (same pid) to add the flags it was started without (it owns its process).
    const flags = (await readFile(`/proc/${server.child.pid}/cmdline`, 'utf8')).split('\0');
    expect(flags).toEqual(expect.arrayContaining([...ISOLATE_HOST_FLAGS, '--max-semi-space-size=16', ...GUEST_FREEZE_FLAGS]));
    const response = await post(
      `${server.url}/v1/run`,
      { code: `console.log('started');\nawait new Promise((resolve) => setTimeout(resolve, 500));\nreturn 'finished';`, sessionId: 'term', callId: 'term-1' },
      { accept: 'text/event-stream' },
    );
    const events = await readSse(response, (event) => {
      if (event.event === 'log') void server.stop();
    });
    expect(events.at(-1)).toMatchObject({ event: 'result', data: { isError: false, value: { result: 'finished' } } });
    expect(await server.exited).toBe(0);
    const log = await readFile(path.join(cwd, '.ptc/sessions/term.jsonl'), 'utf8');
    const stored = log.trim().split('\n').map((line) => JSON.parse(line) as { type: string; callId: string });
    expect(stored.at(-1)).toMatchObject({ type: 'tool/result', callId: 'term-1', isError: false });
  });
});
