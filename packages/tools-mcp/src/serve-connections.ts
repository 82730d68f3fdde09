/**
 * The connections `serveHttp` keeps open at once. Any local user can open connections to a
 * loopback port, so a limit that refused every connection past it let someone without the token
 * hold all of them — idle, each reopened as soon as the headers timeout closed it — and the
 * token's own clients could not connect at all. Here a connection is the token's once one of its
 * requests carried the token (or passed the `Host` check, with `auth: 'none'`); until then it is a
 * stranger's. A connection that would pass the limit takes the place of the stranger's connection
 * that has been open longest; only when every open connection is the token's is it refused.
 */
import type { Socket } from 'node:net';

/** The open connections of one server, at most `max`. */
export class ConnectionBudget {
  readonly #max: number;
  /** Connections that never presented the token, oldest first (a Set keeps insertion order). */
  readonly #strangers = new Set<Socket>();
  readonly #trusted = new Set<Socket>();

  constructor(max: number) {
    if (!(max >= 1)) throw new RangeError(`maxConnections must be >= 1, got ${String(max)}`);
    this.#max = max;
  }

  /**
   * Counts a new connection, making room by closing the oldest stranger's when the limit is
   * reached; false (and the new one closed) when every open connection is the token's.
   */
  admit(socket: Socket): boolean {
    if (this.#strangers.size + this.#trusted.size >= this.#max) {
      const oldest = this.#strangers.values().next().value;
      if (oldest === undefined) {
        socket.destroy();
        return false;
      }
      this.#strangers.delete(oldest);
      oldest.destroy();
    }
    this.#strangers.add(socket);
    socket.once('close', () => {
      this.#strangers.delete(socket);
      this.#trusted.delete(socket);
    });
    return true;
  }

  /** The connection presented the token: it is never closed to make room. */
  trust(socket: Socket): void {
    if (this.#strangers.delete(socket)) this.#trusted.add(socket);
  }
}
