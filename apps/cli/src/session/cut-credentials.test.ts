import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

// A line cut for the terminal keeps most of what it cut: the redaction looked for whole values
// only, so a retry notice shortened to 160 characters showed all but the end of a key or of a
// URL's password. Real CLI processes against a local server that answers every request with a
// retryable error (or is never reached: fetch refuses a URL with a password).

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const key = `sk-proj-${'Kq7v'.repeat(12)}`;
// No word the CLI prints itself (`--pass-env` of the withheld-credentials notice had `-pas`).
const password = 'Tr0ub4dor-wyrm-99';

/** A server that answers 503 with `message`, each time. */
async function failingServer(message: (authorization: string) => string): Promise<string> {
  const server = createServer((request, response) => {
    request.resume().on('end', () => {
      response.writeHead(503, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          error: { message: message(request.headers.authorization ?? ''), type: 'overloaded' },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function run(env: Record<string, string>) {
  const home = await tempDir('agent-cli-cut-credentials-');
  cleanups.push(home.dispose);
  return runCli(['-p', 'hi', '--provider', 'openai', '--cwd', home.path], {
    env: cleanEnv({ AGENT_HOME: home.path, ...env }),
  });
}

/** No run of 4 characters of `secret` past its first `shown` ones appears in `text`. */
function expectNoFragment(text: string, secret: string, shown = 0) {
  for (let at = shown; at + 4 <= secret.length; at++)
    expect(text, `"${secret.slice(at, at + 4)}" of the secret was shown`).not.toContain(
      secret.slice(at, at + 4),
    );
}

describe('a credential cut short on the terminal', () => {
  it.each([
    // The notice keeps 160 characters of the server's message: the cut falls in the key.
    ['a key echoed after 100 characters of message', 100],
    ['a key echoed after 120 characters', 120],
    ['a key echoed after 140 characters', 140],
  ])('%s: each retry notice shows the marker, no piece of the key', async (_name, filler) => {
    const url = await failingServer(
      (authorization) => `${'The upstream is busy; '.repeat(20).slice(0, filler)} ${authorization}`,
    );
    const result = await run({ OPENAI_API_KEY: key, OPENAI_BASE_URL: `${url}/v1` });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('retrying in');
    // Where the notice was cut, in the key: its start is the marker.
    expect(result.stderr).toMatch(/Bearer \[redacted:OPENAI_API_KEY\]… — retrying in/);
    // `sk-proj-` is what every OpenAI project key starts with: no secret.
    expectNoFragment(result.stdout + result.stderr, key, 'sk-proj-'.length);
  });

  it("a base URL's password, in fetch's refusal cut by the retry notice: no piece of it", async () => {
    const url = await failingServer(() => 'unused');
    const withPassword = url.replace('http://', `http://alice:${password}@`);
    const result = await run({ OPENAI_BASE_URL: `${withPassword}/v1` });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('retrying in');
    expectNoFragment(result.stdout + result.stderr, password);
  });
});
