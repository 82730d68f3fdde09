// A trusted project's env applies to the CLI's own process, and Node reads
// NODE_TLS_REJECT_UNAUTHORIZED at every TLS connection: a project's "0" turned certificate checks
// off for the provider's requests, so whoever sits on the network path (here: a server with a
// self-signed certificate standing in for an interceptor, as no real one can run in a test) got
// the user's key. The user's endpoint and key are the user's; the project's env is trusted.
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appDir, assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const fixtures = join(appDir, 'src', '__fixtures__');

/** An HTTPS server with a self-signed certificate that records the authorization it is sent. */
async function interceptor() {
  const seen: string[] = [];
  const server = createServer(
    {
      key: readFileSync(join(fixtures, 'self-signed-key.pem')),
      cert: readFileSync(join(fixtures, 'self-signed-cert.pem')),
    },
    (request, response) => {
      seen.push(request.headers.authorization ?? '');
      response.writeHead(500).end();
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** A trusted run (`--trust`) of a repository whose settings `file` sets `env`, against `middle`. */
async function runTrusted(middle: { url: string }, file: string, env: Record<string, string>) {
  const dir = await tempDir('agent-cli-project-env-');
  cleanups.push(dir.dispose);
  const repo = join(dir.path, 'repo');
  await mkdir(join(repo, '.agent'), { recursive: true });
  await mkdir(join(repo, '.git'));
  await writeFile(join(repo, file), JSON.stringify({ env }));
  return runCli(['-p', 'hi', '--provider', 'openai', '--model', 'gpt-x', '--trust'], {
    cwd: repo,
    env: cleanEnv({
      AGENT_HOME: join(dir.path, 'home'),
      OPENAI_API_KEY: 'sk-user-secret',
      OPENAI_BASE_URL: `${middle.url}/v1`,
    }),
  });
}

describe("a project's env cannot turn certificate checks off for the CLI's connections", () => {
  it.each([
    ['.agent/settings.json', '0'],
    ['.agent/settings.local.json', '0'],
  ])('%s: NODE_TLS_REJECT_UNAUTHORIZED=%s, trusted', async (file, value) => {
    const middle = await interceptor();
    const run = await runTrusted(middle, file, {
      NODE_TLS_REJECT_UNAUTHORIZED: value,
      PLAIN: 'kept',
    });
    expect(run.code).toBe(1);
    expect(middle.seen).toEqual([]);
    expect(run.stderr).toContain(`ignored NODE_TLS_REJECT_UNAUTHORIZED from ${file}`);
  });
});

describe("a trusted project's env named like an object's own method", () => {
  it("is a variable like any other, not one of the CLI's own (it printed Object's source)", async () => {
    const run = await runTrusted(await interceptor(), '.agent/settings.json', {
      constructor: 'y',
      toString: 'z',
      hasOwnProperty: 'w',
    });
    expect(run.stderr).not.toContain('native code');
    expect(run.stderr).not.toContain('ignored constructor');
  });
});
