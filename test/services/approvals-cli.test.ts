/**
 * `ptc approvals`, `ptc approve` and `ptc deny` as a person runs them, against a real server.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { json, post, startServer, type Running } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '../..');
const NODE = path.join(root, 'node_modules/.bin/node');
const CLI = path.join(root, 'services/cli.ts');

function ptc(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(NODE, [CLI, ...args], { env: { ...process.env, PTC_TOKEN: '' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end();
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

let running: Running | undefined;
afterEach(async () => {
  await running?.server.close();
  running = undefined;
});

describe('ptc approvals / approve / deny', () => {
  it('lists a paused run, denies one with a reason and approves another', async () => {
    running = await startServer({ approvals: [{ tools: 'write', when: 'always' }] });
    const { url } = running;
    const program = (file: string) =>
      `try { await tools.write({ file_path: '${file}', content: 'x' }); console.log('wrote'); return 'done'; } catch (e) { return e.code + ': ' + e.message; }`;
    expect((await json(post(`${url}/v1/run`, { code: program('a.txt'), callId: 'one' }))).paused).toBeDefined();
    expect((await json(post(`${url}/v1/run`, { code: program('b.txt'), callId: 'two' }))).paused).toBeDefined();

    const listed = await ptc(['approvals', '--url', url]);
    expect(listed.stderr).toBe('');
    expect(listed.stdout.trim().split('\n').map((line) => line.split('\t').slice(0, 3))).toEqual([
      ['one', 'default', '#1 write({"file_path":"a.txt","content":"x"})'],
      ['two', 'default', '#1 write({"file_path":"b.txt","content":"x"})'],
    ]);

    const denied = await ptc(['deny', 'one', '--reason', 'not today', '--url', url]);
    expect(denied).toMatchObject({ code: 0, stdout: expect.stringContaining('APPROVAL_DENIED') });
    expect(denied.stdout).toContain('not today');

    const approved = await ptc(['approve', 'two', '--url', url]);
    expect(approved).toMatchObject({ code: 0, stdout: 'wrote\ndone\n' });
  });
});
