// Test-only: `agent mcp serve --http` (the built binary) as a child process, with the URL and the
// bearer token it prints on stderr at start.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cleanEnv, cliPath } from './test-support.js';

/** A running `agent mcp serve --http`. */
export interface ServeProcess {
  url: string;
  /**
   * The new token of this run: on stderr (a pipe here) it is not printed, but written to the file
   * stderr names, read here; undefined with --no-auth or --token-file.
   */
  token: string | undefined;
  /** Everything it wrote on stderr so far. */
  stderr(): string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts the binary with `mcp serve --http` and `args`; resolves once it printed its URL and its
 * last start-up line (the warning of --no-auth, or how to connect).
 */
export function startHttpServe(
  args: readonly string[],
  env: Record<string, string> = cleanEnv(),
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [cliPath, 'mcp', 'serve', '--http', ...args], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let seen = '';
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      seen += chunk;
      const url = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen)?.[1];
      // The Inspector line is the last one printed with a token; the warning the one without.
      const ready =
        /MCP Inspector CLI.*: npx .*\n/.test(seen) || /WARNING: --no-auth.*\n/.test(seen);
      if (url === undefined || !ready) return;
      const file = /Clients must send the bearer token in (.+?), new for this run/.exec(seen)?.[1];
      const token = file === undefined ? undefined : readFileSync(file, 'utf8').trim();
      resolve({ url, token, stderr: () => seen, stop });
    });
    child.once('exit', (code) => reject(new Error(`agent mcp serve exited ${code}: ${seen}`)));
  });
}
