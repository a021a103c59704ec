/**
 * leaveProcess (sandbox/leave-process.ts): the process exits with the code
 * once its event loop is empty, and, should something keep holding the loop,
 * after the grace all the same.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const module = new URL('../../sandbox/leave-process.ts', import.meta.url).href;

async function exitOf(body: string): Promise<{ code: number | null; stdout: string }> {
  const script = `import { leaveProcess } from ${JSON.stringify(module)};\n${body}`;
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code?: number | null; stdout?: string };
    return { code: failed.code ?? null, stdout: failed.stdout ?? '' };
  }
}

describe('leaveProcess', () => {
  it('exits with the code when the loop empties, after what is still queued has run', async () => {
    const { code, stdout } = await exitOf("leaveProcess(3);\nsetImmediate(() => console.log('drained'));");
    expect(code).toBe(3);
    expect(stdout).toBe('drained\n');
  });

  it('exits with the code after the grace when a handle still holds the loop', async () => {
    const { code, stdout } = await exitOf("setInterval(() => undefined, 1_000);\nleaveProcess(4, 50);\nconsole.log('held');");
    expect(code).toBe(4);
    expect(stdout).toBe('held\n');
  });
});
