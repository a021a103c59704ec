/**
 * The CLI's client commands for durable runs, against a running service
 * (`ptc serve`): `ptc approvals`, `ptc approve <callId>`, `ptc deny <callId>`.
 * They speak the HTTP API (GET /v1/approvals, POST /v1/runs/:callId/decision)
 * and print what it answers.
 */
import { Option, type Command } from 'commander';
import { DEFAULTS, ENV } from './config.ts';

export const URL_ENV = 'PTC_URL';

interface ClientFlags {
  url?: string;
  token?: string;
  json?: boolean;
}

interface PendingCall {
  seq: number;
  toolName: string;
  args: unknown;
}

/** Adds the three commands to `program`; each sets `process.exitCode` (0 done, 1 the run failed, 2 the request failed). */
export function addApprovalCommands(program: Command): void {
  clientOptions(program.command('approvals').description('List the paused runs waiting for a decision on a running service (GET /v1/approvals).')).action(
    async (flags: ClientFlags) => {
      const answer = await request(flags, 'GET', '/v1/approvals');
      if (answer === undefined) return;
      const { approvals } = answer as { approvals: { callId: string; sessionId: string; description: string; pending: PendingCall[]; expiresAt: string }[] };
      if (flags.json === true) return void process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
      if (approvals.length === 0) return void process.stdout.write('no paused runs\n');
      for (const run of approvals) {
        const calls = run.pending.map((call) => `#${call.seq} ${call.toolName}(${JSON.stringify(call.args)})`).join(', ');
        process.stdout.write(`${run.callId}\t${run.sessionId}\t${calls}\texpires ${run.expiresAt}\t${run.description}\n`);
      }
    },
  );
  for (const decision of ['approve', 'deny'] as const) {
    const command = program
      .command(decision)
      .description(`${decision === 'approve' ? 'Approve' : 'Deny'} the gated call of a paused run and resume it; prints the resumed run's logs and result.`)
      .argument('<callId>', 'the paused run (see ptc approvals)')
      .addOption(new Option('--reason <text>', decision === 'deny' ? 'why (the program sees it in its APPROVAL_DENIED error)' : 'why (kept in the session log)'))
      .addOption(new Option('--by <name>', "who decides (default: the token's tenant, if any)"));
    clientOptions(command).action(async (callId: string, flags: ClientFlags & { reason?: string; by?: string }) => {
      const body = { decision, ...(flags.reason === undefined ? {} : { reason: flags.reason }), ...(flags.by === undefined ? {} : { by: flags.by }) };
      const answer = await request(flags, 'POST', `/v1/runs/${encodeURIComponent(callId)}/decision`, body);
      if (answer === undefined) return;
      printRun(answer as RunAnswer, flags.json === true);
    });
  }
}

function clientOptions(command: Command): Command {
  return command
    .addOption(new Option('--url <url>', `the service (default: http://${DEFAULTS.host}:${DEFAULTS.port}; env: ${URL_ENV})`))
    .addOption(new Option('-t, --token <token>', `its bearer token (default: none; env: ${ENV.token})`))
    .addOption(new Option('--json', 'print the answer as JSON (default: off)'));
}

interface RunAnswer {
  isError: boolean;
  value?: { logs?: string[]; result?: unknown; paused?: { callId: string; pending: PendingCall[] } };
  content: { type: string; text?: string }[];
}

function printRun(answer: RunAnswer, json: boolean): void {
  if (json) process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  else if (answer.isError) for (const block of answer.content) process.stderr.write(`${block.text ?? ''}\n`);
  else {
    for (const line of answer.value?.logs ?? []) process.stdout.write(`${line}\n`);
    const paused = answer.value?.paused;
    if (paused !== undefined) {
      const calls = paused.pending.map((call) => `#${call.seq} ${call.toolName}`).join(', ');
      process.stdout.write(`paused again: ${calls} waits for a decision (ptc approve|deny ${paused.callId})\n`);
    } else if (answer.value?.result !== undefined) {
      const result = answer.value.result;
      process.stdout.write(`${typeof result === 'string' ? result : JSON.stringify(result, null, 2)}\n`);
    }
  }
  process.exitCode = answer.isError ? 1 : 0;
}

/** The JSON answer, or undefined after printing why the request failed (exit code 2). */
async function request(flags: ClientFlags, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  const base = flags.url ?? process.env[URL_ENV] ?? `http://${DEFAULTS.host}:${DEFAULTS.port}`;
  const token = flags.token ?? process.env[ENV.token];
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token !== undefined && token !== '') headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(new URL(path, base), { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  } catch (error) {
    process.stderr.write(`ptc: could not reach ${base}: ${(error as Error).message}; is \`ptc serve\` running there (--url, ${URL_ENV})?\n`);
    process.exitCode = 2;
    return undefined;
  }
  const answer = (await response.json().catch(() => undefined)) as { code?: string; message?: string } | undefined;
  if (!response.ok) {
    process.stderr.write(`ptc: ${response.status} ${answer?.code ?? ''}: ${answer?.message ?? response.statusText}\n`);
    process.exitCode = 2;
    return undefined;
  }
  return answer;
}
