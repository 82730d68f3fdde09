/**
 * A provider's base URL on a loopback port (Ollama, LM Studio, a LiteLLM proxy): any user of the
 * machine can listen on that port while the user's server is not running — before the session,
 * or after it stopped mid-session — or on [::1] beside it for `localhost`, and would be sent the
 * key and the whole conversation. On Linux, where the kernel's socket tables name a listener's
 * owner, the CLI refuses such a base URL at start, and every request of the session checks again
 * before it is sent (a read of `/proc/net/tcp`, for a loopback base URL only).
 */
import { readFileSync } from 'node:fs';
import { CliError } from '../config/cli-error.js';

/** Where the base URL came from (`--base-url`, `OPENAI_BASE_URL`…) and its value. */
export interface BaseUrlSource {
  source: string;
  value: string;
}

type Fetch = typeof globalThis.fetch;

/**
 * Refuses `base` at start when another user's process listens on its loopback port; for a
 * loopback base URL, a `fetch` that checks again before each request (the provider's requests go
 * through it), undefined for any other.
 */
export async function guardLoopbackBaseUrl(
  base: BaseUrlSource | undefined,
): Promise<Fetch | undefined> {
  if (base === undefined) return undefined;
  // Loaded only for a server on this machine: the check reads the kernel's socket tables.
  const { foreignListener, loopbackPort } = await import('@agent/core/loopback');
  const port = loopbackPort(base.value);
  if (port === undefined) return undefined;
  const host = new URL(base.value.trim()).host;
  const refusal = (uid: number, when: string) =>
    `${base.source} points at ${host}, where a process of another user of this machine (uid ${uid}${userName(uid)}) listens, not yours: ${when}. Start your server there first (as yourself or as a service's system account), or use another port`;
  const atStart = foreignListener(port);
  if (atStart !== undefined)
    throw new CliError(refusal(atStart, 'the key and the conversation would go to it'));
  return (input, init) => {
    const uid = foreignListener(port);
    if (uid === undefined) return globalThis.fetch(input, init);
    // Your server there stopped, and another user's process took its port.
    return Promise.reject(new Error(refusal(uid, 'the request was not sent (nor the key)')));
  };
}

/** ", name" of a local account from /etc/passwd, or nothing. */
function userName(uid: number): string {
  try {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((entry) => entry.split(':')[2] === String(uid));
    const name = line?.split(':')[0];
    return name ? `, ${name}` : '';
  } catch {
    return '';
  }
}
