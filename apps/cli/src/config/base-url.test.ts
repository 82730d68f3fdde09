// A base URL as a new user pastes it: no scheme, quotes kept from a .env file, the whole endpoint,
// no /v1, https:// to a server on plain HTTP, OPENAI_BASE_URL alone for a local server. Each says
// at start (or with the first failure) what is wrong and what to set — not `Invalid URL`, `unknown
// scheme` or a bare 404 at the first prompt. The built CLI as a real process against real HTTP
// servers on 127.0.0.1.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  chatCompletionStream,
  cleanEnv,
  cliPath,
  runCli,
  tempDir,
} from '../testing/test-support.js';
import { baseUrlProblem, commandLineHolds } from './base-url.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Serves an OpenAI-compatible stream at /v1/chat/completions only, 404 text elsewhere (as Ollama does). */
async function localServer(): Promise<{ origin: string; paths: string[] }> {
  const paths: string[] = [];
  const server: Server = createServer((request, response) => {
    paths.push(request.url ?? '');
    request.resume();
    request.on('end', () => {
      if (request.url !== '/v1/chat/completions') {
        response.writeHead(404, { 'content-type': 'text/plain' });
        response.end('404 page not found');
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(chatCompletionStream('local answer'));
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
}

async function home(): Promise<string> {
  const dir = await tempDir('agent-base-url-');
  cleanups.push(dir.dispose);
  return dir.path;
}

describe('baseUrlProblem', () => {
  it.each([
    ['127.0.0.1:8080/v1', 'is not a URL: start it with http:// or https://'],
    ['localhost:11434', 'is not an http:// or https:// URL'],
    ['ftp://example.com/v1', 'is not an http:// or https:// URL'],
    ['"http://localhost:11434/v1"', 'has quotes around it'],
    ["'http://localhost:11434/v1'", 'has quotes around it'],
    [
      'http://localhost:11434/v1/chat/completions',
      'give http://localhost:11434/v1 (the client adds /chat/completions)',
    ],
    [
      'http://localhost:11434/v1/responses/',
      'give http://localhost:11434/v1 (the client adds /responses)',
    ],
  ])('%j: %s', (value, expected) => {
    expect(baseUrlProblem(value)).toContain(expected);
  });

  it.each([
    'http://localhost:11434/v1',
    'https://openrouter.ai/api/v1',
    ' http://localhost:1234/v1 ',
    'http://[::1]:8000/v1/',
  ])('%j is usable', (value) => {
    expect(baseUrlProblem(value)).toBeUndefined();
  });

  it("Anthropic's endpoint includes its /v1; the base stops before it", () => {
    expect(baseUrlProblem('https://proxy.example/v1/messages', 'anthropic')).toContain(
      'give https://proxy.example (the client adds /v1/messages)',
    );
    expect(baseUrlProblem('https://proxy.example', 'anthropic')).toBeUndefined();
  });

  it('a password in the URL is never echoed', () => {
    const problem = baseUrlProblem('http://me:hunter2-secret@localhost/v1/chat/completions');
    expect(problem).toBeDefined();
    expect(problem).not.toContain('hunter2');
  });
});

describe('at start, before any request', () => {
  it.each([
    ['127.0.0.1:9/v1', 'is not a URL'],
    ["'http://127.0.0.1:9/v1'", 'has quotes around it'],
    [
      'http://127.0.0.1:9/v1/chat/completions',
      'names the endpoint, not the base: give http://127.0.0.1:9/v1',
    ],
  ])('--base-url %j: a usage error naming the flag', async (value, expected) => {
    const run = await runCli(['--base-url', value, '--model', 'm', '-p', 'hi'], {
      cwd: await home(),
      env: cleanEnv({ AGENT_HOME: await home() }),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      new RegExp(`^agent: --base-url .*${expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
    expect(run.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });

  it.each([
    ['OPENAI_BASE_URL', '127.0.0.1:9/v1', 'is not a URL'],
    ['OPENAI_BASE_URL', '"http://127.0.0.1:9/v1"', 'has quotes around it'],
    [
      'ANTHROPIC_BASE_URL',
      'https://127.0.0.1:9/v1/messages',
      'give https://127.0.0.1:9 (the client adds /v1/messages)',
    ],
  ])('%s=%j: an error naming the variable', async (variable, value, expected) => {
    const run = await runCli(['-p', 'hi'], {
      cwd: await home(),
      env: cleanEnv({
        AGENT_HOME: await home(),
        [variable]: value,
        [variable.replace('BASE_URL', 'API_KEY')]: 'sk-test',
      }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`agent: ${variable} `);
    expect(run.stderr).toContain(expected);
    expect(run.stderr).not.toContain('sk-test');
  });
});

describe('a server that answers, but not there', () => {
  it('no /v1: the 404 says to check the base URL, naming where it came from', async () => {
    const server = await localServer();
    for (const env of [{}, { OPENAI_BASE_URL: server.origin }]) {
      const args = Object.keys(env).length === 0 ? ['--base-url', server.origin] : [];
      const run = await runCli([...args, '--model', 'local', '-p', 'hi'], {
        cwd: await home(),
        env: cleanEnv({ AGENT_HOME: await home(), ...env }),
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('HTTP 404');
      expect(run.stderr).toContain('check the base URL (--base-url');
      expect(run.stderr).toContain('usually take it up to /v1');
    }
    expect(server.paths).toEqual(['/chat/completions', '/chat/completions']);
  });

  it('https:// to a plain HTTP server: says to use http://', async () => {
    const server = await localServer();
    const run = await runCli(
      [
        '--base-url',
        `${server.origin.replace('http:', 'https:')}/v1`,
        '--model',
        'local',
        '-p',
        'hi',
      ],
      { cwd: await home(), env: cleanEnv({ AGENT_HOME: await home() }) },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('use http://, not https://, in the base URL');
  });

  it('OPENAI_BASE_URL alone, no key (a local server set up as its docs say): the run reaches it', async () => {
    const server = await localServer();
    const run = await runCli(['--model', 'local', '-p', 'hi'], {
      cwd: await home(),
      env: cleanEnv({ AGENT_HOME: await home(), OPENAI_BASE_URL: `${server.origin}/v1` }),
    });
    expect(run.stderr).not.toContain('No model provider configured');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('local answer\n');
    expect(server.paths).toEqual(['/v1/chat/completions']);
  });
});

describe('a server that cannot be reached', () => {
  it('a name that does not resolve: a typo in the base URL, or no network', async () => {
    const run = await runCli(
      ['--base-url', 'http://no-such-host.invalid/v1', '--model', 'm', '-p', 'hi'],
      {
        cwd: await home(),
        env: cleanEnv({ AGENT_HOME: await home() }),
      },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "the server's name did not resolve: a typo in the base URL (--base-url), or no network",
    );
  });

  it('a port nothing listens on: is the server running', async () => {
    // A port that was free a moment ago: a server bound and closed.
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const run = await runCli(['-p', 'hi', '--model', 'm'], {
      cwd: await home(),
      env: cleanEnv({ AGENT_HOME: await home(), OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'nothing listens there: is the server running, on that port (--base-url or OPENAI_BASE_URL)?',
    );
  });

  it("offline, the vendor's own address: says the machine may be offline", async (context) => {
    skipWithout('bwrap')(context);
    // A network namespace of its own (bubblewrap): no network at all, as on a plane.
    const run = await runProcess(
      'bwrap',
      [
        '--dev-bind',
        '/',
        '/',
        '--unshare-net',
        process.execPath,
        cliPath,
        '-p',
        'hi',
        '--sandbox',
        'off',
      ],
      {
        cwd: await home(),
        env: cleanEnv({ AGENT_HOME: await home(), ANTHROPIC_API_KEY: 'sk-ant-offline' }),
      },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("the server's name did not resolve: is this machine offline?");
    expect(run.stderr).not.toContain('sk-ant-offline');
  });
});

function runProcess(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('an HTML page where the API should answer', () => {
  it("a gateway's error page: named by its title, in the retries and the error, not pasted", async () => {
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(502, { 'content-type': 'text/html' });
        response.end(
          '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>',
        );
      });
    });
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const run = await runCli(['-p', 'hi', '--model', 'm'], {
      cwd: await home(),
      env: cleanEnv({
        AGENT_HOME: await home(),
        OPENAI_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      // Provider and status once, then the page by its title (before: the provider's own framing
      // and the status three times).
      'error: openai-compatible HTTP 502: an HTML page titled "502 Bad Gateway" (a proxy or gateway answered, not the API)',
    );
    expect(run.stderr).toContain('retrying in');
    expect(run.stderr).not.toContain('<html>');
    expect(run.stderr).not.toContain('<center>');
  });
});

describe('commandLineHolds', () => {
  it("reads this process's command line as others do", () => {
    const script = process.argv[1] ?? '';
    expect(script).not.toBe('');
    expect(commandLineHolds(script)).toBe(true);
    expect(commandLineHolds(`not-on-the-command-line-${process.pid}-x`)).toBe(false);
  });
});
