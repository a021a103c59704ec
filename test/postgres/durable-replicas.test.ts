/**
 * Durable runs across real `ptc serve` replicas on one PostgreSQL: a run paused on A is listed
 * and decided on B, two replicas deciding at once resume it exactly once, and a run paused
 * before every replica restarted resumes on a new one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverDirs, startCliServer, type CliServer, stopCliServers } from '../security/cli-server.ts';
import { startTestDatabase, type TestDatabase } from './embedded.ts';

let pg: TestDatabase;
const replicas: CliServer[] = [];

const CONFIG = { approvals: [{ tools: 'write', when: 'always' }] };
const start = async () => {
  const replica = await startCliServer(await serverDirs({ ...CONFIG, shutdownGraceMs: 2_000 }), ['--database-url', pg.url, '--runtime', 'in-process']);
  replicas.push(replica);
  return replica;
};

beforeAll(async () => {
  pg = await startTestDatabase();
  await Promise.all([start(), start()]);
}, 180_000);

afterAll(async () => {
  await stopCliServers(replicas);
  await pg?.destroy();
}, 60_000);

interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

async function post(replica: CliServer, path: string, body: object): Promise<Answer> {
  const response = await fetch(`${replica.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

async function get(replica: CliServer, path: string): Promise<Answer> {
  const response = await fetch(`${replica.url}${path}`);
  return { status: response.status, body: await response.json() };
}

const program = (file: string) => `
  const before = (await tools.glob({ pattern: "*" })).paths.length;
  await tools.write({ file_path: ${JSON.stringify(file)}, content: "written\\n" });
  return { before, text: (await tools.read({ file_path: ${JSON.stringify(file)} })).lines[0].text };`;

describe('durable runs on replicas sharing PostgreSQL', () => {
  it('pauses on A, lists and shows it on B, and of two replicas deciding at once exactly one resumes it', async () => {
    const [a, b] = replicas;
    const paused = await post(a, '/v1/run', { code: program('race.txt'), callId: 'dur-race', sessionId: 'dur' });
    expect(paused.status).toBe(200);
    expect(paused.body.paused).toMatchObject({ callId: 'dur-race', pending: [{ seq: 2, toolName: 'write' }] });
    const listed = await get(b, '/v1/approvals');
    expect(listed.body.approvals.map((run: { callId: string }) => run.callId)).toContain('dur-race');
    expect((await get(b, '/v1/runs/dur-race')).body.state).toBe('paused');

    const answers = await Promise.all([a, b].map((replica) => post(replica, '/v1/runs/dur-race/decision', { decision: 'approve' })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const won = answers.find((answer) => answer.status === 200)!;
    expect(won.body.isError).toBe(false);
    expect(won.body.value.result).toMatchObject({ text: 'written' });
    expect(answers.find((answer) => answer.status === 409)!.body.code).toBe('RUN_NOT_PAUSED');
    // One resume: the session log has one run/resumed and the write dispatched once.
    const events: { type: string; name?: string }[] = (await get(a, '/v1/sessions/dur/events?limit=1000')).body.events;
    expect(events.filter((event) => event.type === 'run/resumed')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'tool/ptc-dispatch' && event.name === 'write')).toHaveLength(1);
    expect((await get(b, '/v1/approvals')).body.approvals.map((run: { callId: string }) => run.callId)).not.toContain('dur-race');
  });

  it('resumes a run paused before every replica restarted, on a replica started afterwards', async () => {
    const paused = await post(replicas[0], '/v1/run', { code: program('restart.txt'), callId: 'dur-restart', sessionId: 'dur' });
    expect(paused.body.paused).toMatchObject({ callId: 'dur-restart' });
    for (const replica of replicas) {
      replica.child.kill('SIGTERM');
      await replica.exited;
    }
    const fresh = await start();
    expect((await get(fresh, '/v1/approvals')).body.approvals.map((run: { callId: string }) => run.callId)).toEqual(['dur-restart']);
    const resumed = await post(fresh, '/v1/runs/dur-restart/decision', { decision: 'deny', reason: 'not after a restart' });
    expect(resumed.status).toBe(200);
    // The program did not catch the denial: the run fails with it, and the file was never written.
    expect(resumed.body.isError).toBe(true);
    expect(resumed.body.error.message).toContain('APPROVAL_DENIED');
    expect(resumed.body.error.message).toContain('not after a restart');
  });
});
