import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineTool } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { serveHttp } from './serve.js';

// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned), run against our
// client (conformance/client.mjs, on the built adapter) and our server (serveHttp). It prints
// "Passed: 0/0 … PASSED" for a client that does nothing, so a scenario counts only when at least
// one of its checks ran and none failed.
//
// Server scenarios about resources, prompts, logging, completion, sampling and
// elicitation, and the tools-call-* ones that need the suite's own test tools, do not apply to a
// server of arbitrary tools.
const require = createRequire(import.meta.url);
const suite = join(
  require.resolve('@modelcontextprotocol/conformance/package.json'),
  '..',
  'dist',
  'index.js',
);
const client = fileURLToPath(new URL('../conformance/client.mjs', import.meta.url));
// Preloaded into the suite to send our server's bearer token (its `server` command has no option for it).
const bearerToken = fileURLToPath(new URL('../conformance/bearer-token.mjs', import.meta.url));
const workDir = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
  description?: string;
  details?: { message?: string };
}

/** Runs the suite for one scenario (sending `token` on every request); returns its checks. */
function runScenario(args: string[], scenario: string, token?: string): Promise<Check[]> {
  const cwd = mkdtempSync(join(workDir, 'run-'));
  return new Promise((resolve, reject) => {
    const results = join(cwd, 'results');
    const preload = token === undefined ? [] : ['--import', bearerToken];
    const child = spawn(
      process.execPath,
      [...preload, suite, ...args, '--scenario', scenario, '-o', results],
      {
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: token === undefined ? process.env : { ...process.env, MCP_BEARER_TOKEN: token },
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', () => {
      let checks: Check[] = [];
      try {
        for (const entry of readdirSync(results)) {
          checks = checks.concat(
            JSON.parse(readFileSync(join(results, entry, 'checks.json'), 'utf8')) as Check[],
          );
        }
      } catch (error) {
        reject(new Error(`no results for ${scenario}: ${String(error)}\n${output.slice(-2000)}`));
        return;
      }
      resolve(checks);
    });
  });
}

function verdict(checks: Check[]) {
  const judged = checks.filter((check) => check.status === 'SUCCESS' || check.status === 'FAILURE');
  return {
    judged: judged.length > 0,
    failures: judged
      .filter((check) => check.status === 'FAILURE')
      .map((check) => `${check.id}: ${check.errorMessage ?? ''}`),
  };
}

/**
 * Every failure is one a loaded machine causes, not the client: the suite's wall-clock
 * "reconnected very late", a scenario's tool "not called by client" (or, in the auth scenarios,
 * "Client did not make any authorization requests") because the whole suite, run at once,
 * stopped the client before it got there, or the scenario server's own request
 * timing out while the client waited for a CPU (the checks that depend on that request then
 * fail without a message of their own). A client that never answers times out alone too.
 */
function onlyLoadSymptoms(checks: Check[]): boolean {
  const failures = checks.filter((check) => check.status === 'FAILURE');
  const timedOut = failures.some((check) => /Request timed out/.test(check.errorMessage ?? ''));
  return (
    failures.length > 0 &&
    failures.every(
      (check) =>
        (check.id === 'client-sse-retry-timing' &&
          /reconnected very late/.test(check.errorMessage ?? '')) ||
        (check.errorMessage === undefined &&
          /not called by client/.test(check.details?.message ?? '')) ||
        // The same, said by the auth scenarios: the client was stopped before its first request.
        (check.errorMessage === undefined &&
          /^Client did not (make any|complete|make an)/.test(check.description ?? '')) ||
        (timedOut && (/Request timed out/.test(check.errorMessage ?? '') || !check.errorMessage)),
    )
  );
}

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

/** Every client scenario of the pinned suite (`conformance list`), each judged on its own. */
const clientScenarios = [
  'initialize',
  'tools_call',
  'elicitation-sep1034-client-defaults',
  'sse-retry',
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/client-credentials-jwt',
  'auth/client-credentials-basic',
];
// The one scenario not passed, on purpose: cross-app access (an extension) is not implemented.
const notImplemented = ['auth/cross-app-access-complete-flow'];

describe('MCP conformance: our client (the whole suite, against its real servers)', () => {
  const output = join(workDir, 'client');
  const results = new Map<string, Check[]>();
  beforeAll(async () => {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          suite,
          'client',
          '--command',
          `"${process.execPath}" ${client}`,
          '--suite',
          'all',
          '-o',
          output,
        ],
        { cwd: workDir, stdio: 'ignore' },
      );
      child.on('error', reject);
      child.on('close', () => resolve());
    });
    // Results land in <output>/<scenario>-<timestamp>/checks.json (auth/… in a subfolder).
    const collect = (dir: string, prefix: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const path = join(dir, entry.name);
        const match = /^(.*)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry.name);
        if (match?.[1] !== undefined) {
          results.set(
            `${prefix}${match[1]}`,
            JSON.parse(readFileSync(join(path, 'checks.json'), 'utf8')) as Check[],
          );
        } else collect(path, `${prefix}${entry.name}/`);
      }
    };
    collect(output, '');
  }, 180_000);

  it('the suite ran every scenario listed here, and no other', () => {
    expect([...results.keys()].sort()).toEqual([...clientScenarios, ...notImplemented].sort());
  });

  for (const scenario of clientScenarios) {
    it(scenario, async () => {
      let checks = results.get(scenario) ?? [];
      // sse-retry measures the reconnection delay with the wall clock and calls anything over
      // 2 × the retry field "very late", a scenario whose client the suite stopped before it
      // called the tool says "not called", and a server request can time out: on a loaded 2-core
      // CI machine the whole suite running at once can do any of these to a correct client. Only those are run again, alone, up to twice;
      // reconnecting too early, a wrong answer or any other failure fails at once.
      for (let rerun = 0; rerun < 2 && onlyLoadSymptoms(checks); rerun++) {
        checks = await runScenario(
          ['client', '--command', `"${process.execPath}" ${client}`],
          scenario,
        );
      }
      expect(verdict(checks)).toEqual({ judged: true, failures: [] });
    }, 60_000);
  }

  it('cross-app access is not implemented (and fails, so this list stays honest)', () => {
    expect(verdict(results.get(notImplemented[0] as string) ?? []).failures.length).toBeGreaterThan(
      0,
    );
  });
});

describe('MCP conformance: our server (serveHttp, with its bearer token)', () => {
  let url = '';
  let token: string | undefined;
  let close: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes the text.',
      input: z.object({ text: z.string() }),
      execute: async ({ text }) => text,
    });
    ({ url, token, close } = await serveHttp({ tools: [echo] }));
  });
  afterAll(() => close());

  for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) {
    it(scenario, async () => {
      const checks = await runScenario(['server', '--url', url], scenario, token);
      expect(verdict(checks)).toEqual({ judged: true, failures: [] });
    }, 60_000);
  }

  it('without the token the suite gets nowhere: its requests are refused', async () => {
    const checks = await runScenario(['server', '--url', url], 'server-initialize');
    expect(verdict(checks).failures.join('\n')).toMatch(/Unauthorized: send the token/);
  }, 60_000);
});
