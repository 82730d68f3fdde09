/**
 * An API on this machine's loopback interface (`http://127.0.0.1:8080`, `localhost`, `[::1]`):
 * any user of the machine can listen on its port while the user's own server there is not
 * running (not started yet, or stopped mid-session), or on `[::1]` beside it for `localhost`, and
 * would be sent the credentials and the arguments of every call, and answer the model. On Linux,
 * where the kernel's socket tables name a listening socket's owner, no request goes to a port
 * another user's process (not root's, nor a system account's) listens on (`@agent/core/loopback`).
 */

/**
 * Why nothing may go to `url`: a process of another user listens on its loopback port; undefined
 * for any other URL, or where nothing can be told (not Linux).
 */
export async function foreignLoopbackServer(url: string): Promise<string | undefined> {
  // Loaded only when used, so the package root stays free of Node-only modules.
  const { foreignListener, loopbackPort } = await import('@agent/core/loopback');
  const port = loopbackPort(url);
  const uid = port === undefined ? undefined : foreignListener(port);
  if (uid === undefined) return undefined;
  return `the process listening on ${new URL(url).host} belongs to another user of this machine (uid ${uid}), not to you, and would be sent the API's credentials and the call's arguments: nothing was sent. Start the API's server there (as yourself), or use another port`;
}
