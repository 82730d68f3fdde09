// Runtime grants: the `always`/`never` answers of a session, kept by tool and exact subject.
import { AgentError } from './errors.js';
import type { PermissionGrant } from './permission-types.js';

/** Checks one saved grant; throws an `AgentError` naming its index when it is not one. */
export function parseGrant(grant: unknown, index: number): PermissionGrant {
  const fail = (why: string): never => {
    throw new AgentError(`Invalid permission grant at index ${index}: ${why}`);
  };
  if (grant === null || typeof grant !== 'object') return fail('expected an object');
  const { tool, subject, decision } = grant as Record<string, unknown>;
  if (typeof tool !== 'string' || tool === '') fail('"tool" must be a non-empty string');
  if (subject !== undefined && typeof subject !== 'string') fail('"subject" must be a string');
  if (decision !== 'allow' && decision !== 'deny') fail('"decision" must be "allow" or "deny"');
  return {
    tool: tool as string,
    ...(subject === undefined ? {} : { subject: subject as string }),
    decision: decision as 'allow' | 'deny',
  };
}

/**
 * The runtime grants of a policy, one per tool and subject, ordered by when each answer was last
 * given (plain JSON in and out).
 */
export class PermissionGrants {
  readonly #grants = new Map<string, PermissionGrant>();

  /** The grant for a tool's canonical name and one subject (undefined: calls with no subjects). */
  get(tool: string, subject: string | undefined): PermissionGrant | undefined {
    // Most sessions hold no runtime grant: then no call needs a grant key built.
    if (this.#grants.size === 0) return undefined;
    return this.#grants.get(grantKey(tool, subject));
  }

  /** Adds or replaces the grant for its tool and subject. */
  add(grant: PermissionGrant): void {
    const key = grantKey(grant.tool, grant.subject);
    // Re-inserting keeps `grants` ordered by when each answer was last given.
    this.#grants.delete(key);
    this.#grants.set(key, grant);
  }

  /** Every grant, oldest first (the stored objects: copy before handing them out). */
  values(): PermissionGrant[] {
    return [...this.#grants.values()];
  }

  /** Forgets every grant. */
  clear(): void {
    this.#grants.clear();
  }
}

function grantKey(tool: string, subject: string | undefined): string {
  return JSON.stringify([tool, subject ?? null]);
}
