/**
 * Test-only: an HTTP server run by another user of the machine (`nobody`, or a system account),
 * for the tests of what a client sends to a loopback port it does not own: python3 (which every
 * user can run, unlike a Node in root's home) printing the headers of each request it gets and
 * answering 401 — and their curl as a client. Starting a process as another user needs root.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The uid tests run another user's processes as (as root only). */
export const nobodyUid = 65_534;

/** A running {@link recordingServerAs}. */
export interface RecordingServer {
  port: number;
  /** `http://host:port`, brackets around an IPv6 host. */
  origin: string;
  /** The header lines of every request it got so far. */
  output(): string;
  /**
   * The header lines of every request it got before a last request of ours (it answers one
   * request at a time, in order): what a client sent it before this call, the client having
   * finished; '' when nothing was sent.
   */
  received(): Promise<string>;
  /** Ends the server. */
  stop(): void;
}

const script = readFileSync(
  new URL('./__fixtures__/recording-http-server.py', import.meta.url),
  'utf8',
);

/** The recording server as `uid`, listening on `host` [127.0.0.1] and `port` [any free one]. */
export async function recordingServerAs(
  uid: number,
  options: { host?: string; port?: number } = {},
): Promise<RecordingServer> {
  const host = options.host ?? '127.0.0.1';
  const args = ['-c', script, host, ...(options.port === undefined ? [] : [String(options.port)])];
  const child = execFile('python3', args, {
    uid,
    gid: uid,
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
  });
  let output = '';
  let onOutput: () => void = () => undefined;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    onOutput();
  });
  const port = await new Promise<number>((resolve, reject) => {
    onOutput = () => {
      const found = /port (\d+)\n/.exec(output)?.[1];
      if (found !== undefined) resolve(Number(found));
    };
    child.once('exit', (code) => reject(new Error(`python3 exited ${code}: ${output}`)));
  });
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const received = async () => {
    const marker = `marker-${Math.random().toString(36).slice(2)}`;
    const seen = new Promise<void>((resolve) => {
      onOutput = () => {
        if (output.includes(marker)) resolve();
      };
    });
    await fetch(`${origin}/`, { method: 'POST', headers: { 'x-marker': marker } });
    await seen;
    // The header lines after its first ('port N'), up to our request's.
    const ours = output.lastIndexOf('\n', output.indexOf(marker));
    return output.slice(output.indexOf('\n') + 1, output.lastIndexOf('\n\n', ours) + 2);
  };
  return { port, origin, output: () => output, received, stop: () => void child.kill() };
}

/**
 * `curl -s <args> <url>` as `uid` [nobody] (root only): the HTTP status (0 when nothing answered)
 * and the body.
 */
export function curlAs(
  url: string,
  args: readonly string[] = [],
  uid = nobodyUid,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'curl',
      ['-s', '-w', '\n%{http_code}', ...args, url],
      { uid, gid: uid, env: { PATH: '/usr/local/bin:/usr/bin:/bin' } },
      (error, stdout) => {
        if (error !== null && stdout === '') reject(error);
        const cut = stdout.lastIndexOf('\n');
        resolve({ status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) });
      },
    );
  });
}
