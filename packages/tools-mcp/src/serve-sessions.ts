/**
 * The client sessions of `serveHttp`: an id given at `initialize` (`Mcp-Session-Id`), bound to the
 * credential that created it, until the client ends it (DELETE) or the server forgets it (unused
 * for `idleMs`, or past `maxSessions`, the least recently used). An id that leaked (a log, a
 * proxy, a client's crash dump) is so worth something only while its client still uses it. A request naming an id this server does not hold for
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
  /** When it was last used, by `now`. */
  usedAt: number;
}

/** Options of {@link HttpSessions}. */
export interface HttpSessionsOptions {
  /** Sessions kept at once; past it the least recently used is forgotten [1024]. */
  maxSessions?: number;
  /** How long a session may go unused before it is forgotten, in ms [1_800_000: 30 minutes]. */
  idleMs?: number;
  /** The clock, in ms (monotonic) [performance.now]. */
  now?: () => number;
}

/** The sessions one `serveHttp` has given and not ended. */
export class HttpSessions {
  readonly #sessions = new Map<string, Session>();
  readonly #max: number;
  readonly #idleMs: number;
  readonly #now: () => number;

  constructor(options: HttpSessionsOptions = {}) {
    this.#max = options.maxSessions ?? 1024;
    this.#idleMs = options.idleMs ?? 30 * 60_000;
    this.#now = options.now ?? (() => performance.now());
    if (!(this.#idleMs > 0))
      throw new RangeError(`a session's idle time must be > 0 ms, got ${String(options.idleMs)}`);
  }

  /** A new session of `principal`: its id (for the client) and label (for the gate and hooks). */
  start(principal: string): { id: string; label: string } {
    this.#forgetIdle();
    const id = randomBytes(32).toString('base64url');
    const label = randomUUID();
    this.#sessions.set(id, { principal, label, usedAt: this.#now() });
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
    this.#forgetIdle();
    const session = this.#sessions.get(id);
    if (session === undefined || session.principal !== principal) return undefined;
    session.usedAt = this.#now();
    this.#sessions.delete(id);
    this.#sessions.set(id, session);
    return session.label;
  }

  /** Forgets the sessions unused for `idleMs`: the first ones, as the Map is in order of last use. */
  #forgetIdle(): void {
    const now = this.#now();
    for (const [id, session] of this.#sessions) {
      if (now - session.usedAt < this.#idleMs) return;
      this.#sessions.delete(id);
    }
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
