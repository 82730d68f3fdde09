/**
 * An API on this machine's loopback interface (`http://127.0.0.1:8080`, `localhost`, `[::1]`):
 * any user of the machine can listen on its port while the user's own server there is not
 * running (not started yet, or stopped mid-session), or on `[::1]` beside it for `localhost`, and
 * would be sent the credentials of every call. On Linux, where the kernel's socket tables name a
 * listening socket's owner, a request carrying credentials to a port another user's process
 * (not root's, nor a system account's) listens on is not sent (`@agent/core/loopback`).
 */

/**
 * Why credentials must not go to `url`: a process of another user listens on its loopback port;
 * undefined for any other URL, or where nothing can be told (not Linux).
 */
export async function foreignLoopbackServer(url: string): Promise<string | undefined> {
  // Loaded only when used, so the package root stays free of Node-only modules.
  const { foreignListener, loopbackPort } = await import('@agent/core/loopback');
  const port = loopbackPort(url);
  const uid = port === undefined ? undefined : foreignListener(port);
  if (uid === undefined) return undefined;
  return `the process listening on ${new URL(url).host} belongs to another user of this machine (uid ${uid}), not to you, and would be sent the API's credentials: nothing was sent. Start the API's server there (as yourself), or use another port`;
}
