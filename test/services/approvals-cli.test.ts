/**
 * `ptc approvals`, `ptc approve` and `ptc deny` as a person runs them, against a real server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/serve-cli.ts';
import { json, post, startServer, type Running } from './helpers.ts';

const ptc = (args: string[]) => runCli(args, { env: { PTC_TOKEN: '' } });

let running: Running | undefined;
afterEach(async () => {
  await running?.server.close();
  running = undefined;
});

describe('ptc approvals / approve / deny', () => {
  it('lists a paused run, denies one with a reason and approves another', async () => {
    running = await startServer({ approvals: [{ tools: 'write', when: 'always' }] });
    const { url } = running;
    expect(await ptc(['approvals', '--url', url])).toMatchObject({ code: 0, stdout: 'no paused runs\n' });
    const program = (file: string) =>
      `try { await tools.write({ file_path: '${file}', content: 'x' }); console.log('wrote'); return 'done'; } catch (e) { return e.code + ': ' + e.message; }`;
    expect((await json(post(`${url}/v1/run`, { code: program('a.txt'), callId: 'one' }))).paused).toBeDefined();
    expect((await json(post(`${url}/v1/run`, { code: program('b.txt'), callId: 'two' }))).paused).toBeDefined();

    const listed = await ptc(['approvals', '--url', url]);
    expect(listed.stderr).toBe('');
    const answer = JSON.parse((await ptc(['approvals', '--url', url, '--json'])).stdout) as { approvals: { callId: string }[] };
    expect(answer.approvals.map((run) => run.callId)).toEqual(['one', 'two']);
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
