/**
 * A server on this machine's loopback interface (`localhost:3000`, a self-hosted SearXNG) whose
 * port a process of another user holds: any user can listen there while the user's server is not
 * running, and would be sent what the user meant for it and answer the model. On Linux, where the
 * kernel's socket tables name a listener's owner (`@agent/core/loopback`).
 */

/**
 * Why nothing may go to `url` — `the process listening on host:port belongs to another user of
 * this machine (uid N), not to you` — or undefined (not loopback, the user's, root's or a system
 * account's server, or nothing known).
 */
export async function foreignLoopbackServer(url: URL): Promise<string | undefined> {
  // Loaded only when used: the package root stays free of Node-only modules.
  const { foreignListener, loopbackPort } = await import('@agent/core/loopback');
  const port = loopbackPort(url);
  const uid = port === undefined ? undefined : foreignListener(port);
  return uid === undefined
    ? undefined
    : `the process listening on ${url.host} belongs to another user of this machine (uid ${uid}), not to you`;
}
