// `agent mcp serve` (the built binary, as users run it) against third-party MCP clients: the
// official conformance suite's server scenarios (@modelcontextprotocol/conformance, pinned) over
// `--http` with the bearer token the server printed, and the MCP Inspector's CLI mode
// (@modelcontextprotocol/inspector-cli, pinned) over stdio and over HTTP (`--header`). The suite
// prints "Passed: 0/0 … PASSED" when nothing ran, so a scenario counts only when at least one
// check ran and none failed.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startHttpServe } from '../testing/mcp-serve-support.js';
import { assertBuilt, cleanEnv, cliPath, tempDir } from '../testing/test-support.js';

const require = createRequire(import.meta.url);
const suite = join(
  dirname(require.resolve('@modelcontextprotocol/conformance/package.json')),
  'dist',
  'index.js',
);
// The suite's `server` command takes no header: this preload adds `Authorization: Bearer
// $MCP_BEARER_TOKEN` to every request it makes (see that file).
const bearerTokenPreload = join(
  dirname(require.resolve('@agent/tools-mcp/package.json')),
  'conformance',
  'bearer-token.mjs',
);
const inspector = join(
  dirname(require.resolve('@modelcontextprotocol/inspector-cli/package.json')),
  'build',
  'index.js',
);

/**
 * The server scenarios that apply to a server of arbitrary tools. The others test resources,
 * prompts, logging, completion, sampling and elicitation, need the suite's own tools
 * (`tools-call-*`, `json-schema-2020-12`), or a stateful session with resumable SSE streams
 * (`server-sse-*`; `agent mcp serve --http` is stateless).
 */
const serverScenarios = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

let workspace = '';
let url = '';
let token = '';
let server: ServeProcess | undefined;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  assertBuilt();
  const dir = await tempDir('agent-mcp-serve-conf-');
  cleanups.push(dir.dispose);
  workspace = dir.path;
  await writeFile(join(workspace, 'notes.txt'), 'hello from the workspace\n');
  server = await startHttpServe(['--cwd', workspace]);
  url = server.url;
  token = server.token ?? '';
});

afterAll(async () => {
  await server?.stop();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Runs one server scenario of the suite against the served URL (with its token); returns its checks. */
function runScenario(scenario: string, options: { withToken: boolean }): Promise<Check[]> {
  const cwd = mkdtempSync(join(workspace, 'conformance-'));
  const results = join(cwd, 'results');
  const preload = options.withToken ? ['--import', bearerTokenPreload] : [];
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...preload, suite, 'server', '--url', url, '--scenario', scenario, '-o', results],
      {
        cwd,
        timeout: 60_000,
        env: options.withToken ? { ...process.env, MCP_BEARER_TOKEN: token } : process.env,
      },
      (_error, stdout, stderr) => {
        // The suite exits non-zero when a check failed: the checks say which.
        try {
          let checks: Check[] = [];
          for (const entry of readdirSync(results))
            checks = checks.concat(
              JSON.parse(readFileSync(join(results, entry, 'checks.json'), 'utf8')) as Check[],
            );
          resolve(checks);
        } catch (error) {
          reject(new Error(`no results for ${scenario}: ${String(error)}\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

describe('MCP conformance: agent mcp serve --http (the binary, with its token)', () => {
  for (const scenario of serverScenarios) {
    it(scenario, async () => {
      const checks = await runScenario(scenario, { withToken: true });
      const judged = checks.filter((check) => ['SUCCESS', 'FAILURE'].includes(check.status));
      expect(judged.length).toBeGreaterThan(0);
      expect(
        judged
          .filter((check) => check.status === 'FAILURE')
          .map((check) => `${check.id}: ${check.errorMessage ?? ''}`),
      ).toEqual([]);
    }, 60_000);
  }

  it('without the token the suite cannot initialize', async () => {
    const checks = await runScenario('server-initialize', { withToken: false });
    expect(
      checks.filter((check) => check.status === 'FAILURE').map((check) => check.errorMessage),
    ).toEqual([expect.stringContaining('Unauthorized: send the token')]);
  }, 60_000);
});

/** Runs the Inspector CLI; resolves with its parsed JSON output. */
function inspect(target: string[], args: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [inspector, ...target, ...args],
      // Its build/index.js finds its own package.json relative to the working directory; a
      // stdio server inherits this environment (AGENT_HOME in a temp folder, no API keys).
      { timeout: 60_000, cwd: dirname(inspector), env: cleanEnv() },
      (error, stdout, stderr) => {
        if (error !== null) {
          reject(new Error(`inspector-cli failed: ${error.message}\n${stderr}`));
          return;
        }
        try {
          resolve(JSON.parse(stdout));
        } catch {
          reject(new Error(`inspector-cli printed no JSON:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

describe('agent mcp serve with the MCP Inspector CLI as the client', () => {
  const targets = {
    stdio: () => [
      process.execPath,
      cliPath,
      'mcp',
      'serve',
      '--cwd',
      workspace,
      '--deny',
      'read_file(*/secret*)',
    ],
    http: () => [url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`],
  };
  for (const [transport, target] of Object.entries(targets)) {
    it(`${transport}: lists the built-in tools with schemas and annotations, calls one, and the rules refuse`, async () => {
      const listed = (await inspect(target(), ['--method', 'tools/list'])) as {
        tools: { name: string; inputSchema: { properties?: object }; annotations?: object }[];
      };
      const names = listed.tools.map((tool) => tool.name);
      // Read-only by default: only the tools that mode can allow are listed (bash too: its
      // reading commands run in read-only mode).
      expect(names).toEqual(expect.arrayContaining(['read_file', 'list_files', 'search', 'bash']));
      for (const writer of ['write_file', 'edit_file', 'notebook_edit', 'send_user_message'])
        expect(names).not.toContain(writer);
      const readFile = listed.tools.find((tool) => tool.name === 'read_file');
      expect(Object.keys(readFile?.inputSchema.properties ?? {})).toContain('path');
      expect(readFile?.annotations).toMatchObject({ readOnlyHint: true });

      const read = (await inspect(target(), [
        '--method',
        'tools/call',
        '--tool-name',
        'read_file',
        '--tool-arg',
        'path=notes.txt',
      ])) as { isError?: boolean; content: { text: string }[] };
      expect(read.isError).not.toBe(true);
      expect(read.content[0]?.text).toContain('hello from the workspace');

      // A tool that is not served cannot be called either.
      const write = (await inspect(target(), [
        '--method',
        'tools/call',
        '--tool-name',
        'write_file',
        '--tool-arg',
        'path=x.txt',
        'content=x',
      ])) as { isError?: boolean };
      expect(write.isError).toBe(true);
    }, 120_000);
  }

  it('stdio: a --deny rule of the command line is applied on the server side', async () => {
    await writeFile(join(workspace, 'secret.txt'), 'not for you\n');
    const denied = (await inspect(targets.stdio(), [
      '--method',
      'tools/call',
      '--tool-name',
      'read_file',
      '--tool-arg',
      'path=secret.txt',
    ])) as { isError?: boolean; content: { text: string }[] };
    expect(denied.isError).toBe(true);
    expect(denied.content[0]?.text).toContain('read_file(*/secret*)');
  }, 120_000);
});
