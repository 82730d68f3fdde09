// `agent mcp serve` (the built binary, as users run it) against third-party MCP clients: the
// official conformance suite's server scenarios (@modelcontextprotocol/conformance, pinned) over
// `--http`, and the MCP Inspector's CLI mode (@modelcontextprotocol/inspector-cli, pinned) over
// stdio and over HTTP. The suite prints "Passed: 0/0 … PASSED" when nothing ran, so a scenario
// counts only when at least one check ran and none failed.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, cliPath, tempDir } from './test-support.js';

const require = createRequire(import.meta.url);
const suite = join(
  dirname(require.resolve('@modelcontextprotocol/conformance/package.json')),
  'dist',
  'index.js',
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
let server: ChildProcess | undefined;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  assertBuilt();
  const dir = await tempDir('agent-mcp-serve-conf-');
  cleanups.push(dir.dispose);
  workspace = dir.path;
  await writeFile(join(workspace, 'notes.txt'), 'hello from the workspace\n');
  const child = spawn(process.execPath, [cliPath, 'mcp', 'serve', '--http', '--cwd', workspace], {
    env: cleanEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  server = child;
  url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      seen += chunk;
      const found = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen);
      if (found?.[1] !== undefined) resolve(found[1]);
    });
    child.once('exit', (code) => reject(new Error(`agent mcp serve exited ${code}: ${seen}`)));
  });
});

afterAll(async () => {
  if (server !== undefined && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Runs one server scenario of the suite against the served URL; returns its checks. */
function runScenario(scenario: string): Promise<Check[]> {
  const cwd = mkdtempSync(join(workspace, 'conformance-'));
  const results = join(cwd, 'results');
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [suite, 'server', '--url', url, '--scenario', scenario, '-o', results],
      { cwd, timeout: 60_000 },
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

describe('MCP conformance: agent mcp serve --http (the binary)', () => {
  for (const scenario of serverScenarios) {
    it(scenario, async () => {
      const checks = await runScenario(scenario);
      const judged = checks.filter((check) => ['SUCCESS', 'FAILURE'].includes(check.status));
      expect(judged.length).toBeGreaterThan(0);
      expect(
        judged
          .filter((check) => check.status === 'FAILURE')
          .map((check) => `${check.id}: ${check.errorMessage ?? ''}`),
      ).toEqual([]);
    }, 60_000);
  }
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
    http: () => [url, '--transport', 'http'],
  };
  for (const [transport, target] of Object.entries(targets)) {
    it(`${transport}: lists the built-in tools with schemas and annotations, calls one, and the rules refuse`, async () => {
      const listed = (await inspect(target(), ['--method', 'tools/list'])) as {
        tools: { name: string; inputSchema: { properties?: object }; annotations?: object }[];
      };
      const names = listed.tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['bash', 'read_file', 'write_file']));
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

      // Read-only by default, and nobody to ask: a write comes back as an error result.
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
