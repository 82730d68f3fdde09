// Asking the approver about one call, and what its answer means: an outcome, and for
// `always`/`never` the grants to keep.
import type { PermissionRequest } from './agent-options.js';
import { errorMessage } from './errors.js';
import type {
  ApprovalAnswer,
  ApprovalContext,
  ApprovalDecision,
  PermissionApprover,
  PermissionGrant,
  PermissionOutcome,
} from './permission-types.js';

const answers: readonly ApprovalAnswer[] = ['once', 'always', 'deny', 'never'];

/** One question to the approver. */
export interface AskApproverOptions {
  readonly approver: PermissionApprover;
  readonly request: PermissionRequest;
  /** The ask rule that forced the question, when one did. */
  readonly askRule: string | undefined;
  readonly signal: AbortSignal | undefined;
  /** Keeps a grant an `always` or `never` answer made. */
  readonly addGrant: (grant: PermissionGrant) => void;
}

/**
 * Asks the approver and turns its answer into an outcome; never rejects (an approver that throws
 * or answers nonsense gives a denial). An `always`/`never` adds grants for the call's subjects.
 */
export async function askApprover(options: AskApproverOptions): Promise<PermissionOutcome> {
  const { approver, request, askRule, signal, addGrant } = options;
  const context: ApprovalContext = {
    ...(askRule === undefined ? {} : { askRule }),
    ...(signal === undefined ? {} : { signal }),
  };
  let decision: ApprovalDecision;
  try {
    decision = await approver(request, context);
  } catch (error) {
    return {
      behavior: 'deny',
      decidedBy: 'approver',
      reason: `The approver failed: ${errorMessage(error)}`,
    };
  }
  const answer = typeof decision === 'object' && decision !== null ? decision.answer : decision;
  const reason =
    typeof decision === 'object' && decision !== null && typeof decision.reason === 'string'
      ? decision.reason
      : undefined;
  if (!answers.includes(answer)) {
    return {
      behavior: 'deny',
      decidedBy: 'approver',
      reason: `The approver gave no valid answer (${JSON.stringify(answer) ?? String(answer)})`,
    };
  }
  if (signal?.aborted)
    return {
      behavior: 'deny',
      decidedBy: 'cancelled',
      reason: 'Cancelled while waiting for approval',
    };

  // An opaque call's "always" is a "once": its subjects do not name everything it ran, so a
  // grant for them would allow more than the user saw. A "never" is kept (denying is safe).
  if (answer === 'never' || (answer === 'always' && request.opaque === undefined)) {
    const grantDecision = answer === 'always' ? 'allow' : 'deny';
    const keys = request.subjects.length === 0 ? [undefined] : request.subjects;
    for (const subject of keys) {
      addGrant({
        tool: request.toolName,
        ...(subject === undefined ? {} : { subject }),
        decision: grantDecision,
      });
    }
  }
  if (answer === 'once' || answer === 'always') return { behavior: 'allow', decidedBy: 'approver' };
  const unattended =
    typeof decision === 'object' && decision !== null && decision.unattended === true;
  if (unattended) {
    return {
      behavior: 'deny',
      decidedBy: 'no-approver',
      reason:
        reason === undefined || reason === ''
          ? `Tool "${request.toolName}" needs approval, and no one could be asked`
          : reason,
    };
  }
  return {
    behavior: 'deny',
    decidedBy: 'approver',
    reason:
      reason === undefined || reason === ''
        ? 'Denied by the user'
        : `Denied by the user: ${reason}`,
  };
}
