/**
 * Approval in place: a host that can ask a person while the run waits (an MCP client offering
 * elicitation) answers a gated call there and then, and the run goes on without pausing or
 * replaying. A host that cannot answers undefined, and the run pauses as usual.
 */
import type { JsonValue } from '../json.ts';
import type { ApprovalDecision } from './journal-store.ts';

/** A gated call offered for a decision while its run waits. */
export interface InPlaceApprovalRequest {
  /** The run (run_code's callId). */
  readonly runCallId: string;
  readonly sessionId: string;
  /** The nested call's id (`<runCallId>:ptc:<seq>`). */
  readonly callId: string;
  readonly seq: number;
  readonly toolName: string;
  /** The call's canonical arguments. */
  readonly args: JsonValue;
  /** Aborts when the run ends (cancelled, timed out): stop asking then. */
  readonly signal: AbortSignal;
}

/** The person's decision, or undefined when no one can be asked now (the run then pauses). Never rejects. */
export type InPlaceApprover = (request: InPlaceApprovalRequest) => Promise<ApprovalDecision | undefined>;

/**
 * Approvers by run: the one code-mode-wide approver hands each request to the approver its run
 * registered (an MCP session's), and answers undefined for runs with none.
 */
export interface InPlaceApprovers {
  readonly approve: InPlaceApprover;
  /** Asks `approver` for the gated calls of run `runCallId` until the returned function is called. */
  register(runCallId: string, approver: InPlaceApprover): () => void;
}

export function createInPlaceApprovers(): InPlaceApprovers {
  const byRun = new Map<string, InPlaceApprover>();
  return {
    async approve(request) {
      const approver = byRun.get(request.runCallId);
      if (approver === undefined) return undefined;
      try {
        return await approver(request);
      } catch {
        // A host that fails to ask pauses the run instead: the decision can still be made later.
        return undefined;
      }
    },
    register(runCallId, approver) {
      byRun.set(runCallId, approver);
      return () => {
        if (byRun.get(runCallId) === approver) byRun.delete(runCallId);
      };
    },
  };
}
