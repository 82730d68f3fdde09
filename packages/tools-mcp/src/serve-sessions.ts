/**
 * The client sessions of `serveHttp`: an id given at `initialize` (`Mcp-Session-Id`), bound to the
 * credential that created it, until the client ends it (DELETE) or the server forgets it (past
 * `maxSessions`, the least recently used). A request naming an id this server does not hold for
 * its credential — never given, ended, forgotten, or another credential's — is answered 404 like
 * an unknown session (MCP Streamable HTTP transport, session management: "MUST respond … with HTTP
 * 404 Not Found"), so a client starts a new one. Each session has a label of its own for the gate
 * and hooks (`forSession`): the id itself, which is all a client needs to act in a session, is
 * never handed to a hook's input, a log or the model.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** The form of the session ids this server gives: 32 random bytes, base64url (43 characters). */
const sessionIdForm = /^[A-Za-z0-9_-]{43}$/;

/**
 * Who presented a request (already authenticated): a digest of its bearer token, whatever the
 * spelling of its `Authorization` header; `anonymous` without auth.
 */
export function principalOf(authorization: string | undefined, authenticated: boolean): string {
  if (!authenticated) return 'anonymous';
  const token = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1] ?? '';
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}

interface Session {
  readonly principal: string;
  readonly label: string;
}

/** The sessions one `serveHttp` has given and not ended. */
export class HttpSessions {
  readonly #sessions = new Map<string, Session>();
  readonly #max: number;

  constructor(maxSessions = 1024) {
    this.#max = maxSessions;
  }

  /** A new session of `principal`: its id (for the client) and label (for the gate and hooks). */
  start(principal: string): { id: string; label: string } {
    const id = randomBytes(32).toString('base64url');
    const label = randomUUID();
    this.#sessions.set(id, { principal, label });
    // A Map keeps insertion order, and `find` moves a session used to the end: the first is the least recently used.
    while (this.#sessions.size > this.#max) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
    return { id, label };
  }

  /** The label of session `id` when `principal` holds it; undefined for any other id. */
  find(id: string, principal: string): string | undefined {
    if (!sessionIdForm.test(id)) return undefined;
    const session = this.#sessions.get(id);
    if (session === undefined || session.principal !== principal) return undefined;
    this.#sessions.delete(id);
    this.#sessions.set(id, session);
    return session.label;
  }

  /** Ends session `id` of `principal`; whether there was one. Its id is never valid again. */
  end(id: string, principal: string): boolean {
    if (this.find(id, principal) === undefined) return false;
    return this.#sessions.delete(id);
  }

  get size(): number {
    return this.#sessions.size;
  }
}
