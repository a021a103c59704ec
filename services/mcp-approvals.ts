/**
 * Durable runs on the MCP faces. A client that declares the `elicitation` capability is asked
 * about each gated call through `elicitation/create` while the run waits, and the run goes on in
 * place. Other clients get the paused outcome in the run_code result, and answer it with the
 * `decide_run` tool.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { InPlaceApprovalRequest, InPlaceApprover } from '../src/code-mode/in-place-approval.ts';
import type { ApprovalDecision } from '../src/code-mode/journal-store.ts';

export const DECIDE_RUN = 'decide_run';

/** Characters of a gated call's arguments shown in the question. */
const MAX_ARGS_SHOWN = 2_000;

export const DECIDE_RUN_TOOL: Tool = {
  name: DECIDE_RUN,
  title: 'Decide a paused run',
  description:
    'Answers a run_code run that paused because a call needs approval: approve runs the call and resumes the program where it stopped; ' +
    'deny makes the call throw APPROVAL_DENIED (with your reason) inside the program, which may catch it. ' +
    'Ask the user before approving. Returns the resumed run’s result, or another pause.',
  inputSchema: {
    type: 'object',
    properties: {
      callId: { type: 'string', description: 'The paused run’s callId, from its run_code result.' },
      decision: { type: 'string', enum: ['approve', 'deny'] },
      reason: { type: 'string', description: 'Why; a denial’s reason reaches the program.' },
    },
    required: ['callId', 'decision'],
  },
};

/** Whether the connected client can be asked in place. */
export function canElicit(server: Server): boolean {
  return server.getClientCapabilities()?.elicitation?.form !== undefined;
}

/**
 * Asks the client's user about one gated call. A decline or cancel denies it; a failed request
 * (the client does not answer) leaves it undecided, so the run pauses instead.
 */
export function elicitingApprover(server: Server, by: string, relatedRequestId: string | number): InPlaceApprover {
  return async (request: InPlaceApprovalRequest): Promise<ApprovalDecision | undefined> => {
    const result = await server
      .elicitInput(
        {
          mode: 'form',
          message: question(request),
          requestedSchema: {
            type: 'object',
            properties: {
              decision: { type: 'string', title: 'Decision', enum: ['approve', 'deny'], enumNames: ['Approve', 'Deny'] },
              reason: { type: 'string', title: 'Reason', description: 'Optional. A denial’s reason is shown to the program.' },
            },
            required: ['decision'],
          },
        },
        // The person takes their time: the run's own deadline and cancel bound the wait, not a request timeout.
        // On Streamable HTTP the question travels on the stream of the run_code request it belongs to.
        { signal: request.signal, timeout: 2_147_483_647, relatedRequestId },
      )
      .catch(() => undefined);
    if (result === undefined) return undefined;
    if (result.action !== 'accept') return { decision: 'deny', reason: result.action === 'decline' ? 'declined by the user' : 'cancelled by the user', by };
    const { decision, reason } = (result.content ?? {}) as { decision?: unknown; reason?: unknown };
    const made: ApprovalDecision = { decision: decision === 'approve' ? 'approve' : 'deny', by };
    if (typeof reason === 'string' && reason.trim() !== '') made.reason = reason.trim();
    return made;
  };
}

function question(request: InPlaceApprovalRequest): string {
  let args = JSON.stringify(request.args, null, 2);
  if (args.length > MAX_ARGS_SHOWN) args = `${args.slice(0, MAX_ARGS_SHOWN)}…`;
  return `A run_code program wants to call tools.${request.toolName} (call #${request.seq}) with:\n${args}\nApprove this call?`;
}

/** decide_run's arguments, checked; a string says what is wrong. */
export function readDecideArgs(args: Record<string, unknown>): { callId: string; decision: ApprovalDecision } | string {
  const { callId, decision, reason } = args;
  if (typeof callId !== 'string' || callId === '') return 'decide_run needs callId: the paused run’s callId from its run_code result';
  if (decision !== 'approve' && decision !== 'deny') return 'decide_run needs decision: "approve" or "deny"';
  if (reason !== undefined && typeof reason !== 'string') return 'reason must be a string, or left out';
  return { callId, decision: { decision, ...(reason === undefined || reason === '' ? {} : { reason }) } };
}
