/**
 * `@agent/tools-openapi` on GitHub's real REST API description (`@octokit/openapi`,
 * api.github.com, ~13 MB of JSON): load time and retained heap of `OpenApiToolAdapter.fromFile`
 * against reading + `JSON.parse` of the same file (the floor) and `@readme/openapi-parser`'s
 * `dereference` (a peer that does the `$ref`-inlining part of the job); then the per-call
 * overhead of the generated `repos_get` tool against a plain `fetch` of the same URL from a
 * local node:http server.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ToolContext } from '@agent/core';
import { OpenApiToolAdapter } from '@agent/tools-openapi';
import { dereference } from '@readme/openapi-parser';
import { type BenchSection, positiveInt } from '../types.js';

/** Timed loads per implementation [5; env BENCH_OPENAPI_LOADS]; one untimed load each first. */
const loads = positiveInt(process.env.BENCH_OPENAPI_LOADS, 5);
/** Timed calls per implementation in the call phase [2,000; env BENCH_OPENAPI_CALLS]. */
const calls = positiveInt(process.env.BENCH_OPENAPI_CALLS, 2_000);
/** The call phase alternates the two clients in this many blocks, to spread drift. */
const blocks = 10;
const warmupCalls = 200;

const specPath = createRequire(import.meta.url).resolve(
  '@octokit/openapi/generated/api.github.com.json',
);

// A forced GC makes "retained" mean retained, not "whenever V8 last collected".
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

interface Loader {
  label: string;
  load: () => Promise<{ keep: unknown; tools: number | undefined }>;
}

const jsonParse: Loader = {
  label: 'readFile + JSON.parse (floor)',
  load: async () => ({ keep: JSON.parse(await readFile(specPath, 'utf8')), tools: undefined }),
};

const ours: Loader = {
  label: '@agent/tools-openapi OpenApiToolAdapter.fromFile (ours)',
  load: async () => {
    const adapter = await OpenApiToolAdapter.fromFile(specPath, {
      maxTools: Number.POSITIVE_INFINITY,
      onWarning: () => {},
    });
    return { keep: adapter, tools: adapter.tools.length };
  },
};

const readmeDereference: Loader = {
  label: '@readme/openapi-parser dereference (peer, no tools)',
  load: async () => ({ keep: await dereference(specPath), tools: undefined }),
};

interface LoadResult {
  ms: number;
  heapRetained: number;
  tools: number | undefined;
}

async function measureLoad(loader: Loader): Promise<LoadResult> {
  collect();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const { keep, tools } = await loader.load();
  const ms = performance.now() - started;
  collect();
  // `keep` is still referenced here, so its memory counts as retained.
  const heapRetained = process.memoryUsage().heapUsed - heapBefore;
  if (keep === undefined) throw new Error(`${loader.label} returned nothing`);
  return { ms, heapRetained, tools };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

function describe(error: unknown): string {
  return error instanceof Error ? (error.message.split('\n')[0] ?? error.name) : String(error);
}

async function loadSection(): Promise<BenchSection> {
  const loaders = [jsonParse, ours, readmeDereference];
  const results = new Map<Loader, LoadResult[]>(loaders.map((loader) => [loader, []]));
  const failures = new Map<Loader, string>();
  const { size } = await import('node:fs/promises').then((fs) => fs.stat(specPath));
  // One untimed load each: module init, JIT and the page cache are not part of the figures.
  for (const loader of loaders) {
    try {
      await loader.load();
    } catch (error) {
      failures.set(loader, describe(error));
    }
  }
  for (let round = 0; round < loads; round++) {
    for (let index = 0; index < loaders.length; index++) {
      // Rotated order: no loader always runs right after the same one.
      const loader = loaders[(index + round) % loaders.length];
      if (loader === undefined || failures.has(loader)) continue;
      try {
        results.get(loader)?.push(await measureLoad(loader));
      } catch (error) {
        failures.set(loader, describe(error));
      }
    }
  }
  const floorMs = median((results.get(jsonParse) ?? []).map((result) => result.ms));
  const rows = loaders.map((loader) => {
    const failure = failures.get(loader);
    if (failure !== undefined) return [loader.label, `not available: ${failure}`, '', '', ''];
    const measured = results.get(loader) ?? [];
    const ms = median(measured.map((result) => result.ms));
    const tools = measured[0]?.tools;
    return [
      loader.label,
      tools === undefined ? '—' : String(tools),
      `${ms.toFixed(0)} ms`,
      `${(ms / floorMs).toFixed(2)}×`,
      mb(median(measured.map((result) => result.heapRetained))),
    ];
  });
  return {
    title: `tools-openapi: loading GitHub's api.github.com spec (${mb(size)} JSON)`,
    columns: ['Loader', 'Tools', `Median of ${loads}`, 'vs JSON.parse', 'Heap retained'],
    rows,
    notes: [
      `File: @octokit/openapi generated/api.github.com.json. One untimed load per loader, then ${loads} timed loads each, in rotated order; every load reads the file again (page cache warm).`,
      'Ours: `fromFile` with `maxTools: Infinity` (default 128), warnings collected and dropped; one tool per operation with a self-contained JSON Schema for its arguments.',
      'Peer: `@readme/openapi-parser` `dereference(path)` only inlines `$ref`s (circular ones as shared objects) and makes no tools: it is one step of the job, not a like-for-like peer. No OpenAPI-to-agent-tools library was compared: `@spec2tools/sdk` (runtime OpenAPI → AI SDK tools) answered 404 on the npm registry, and `tool-maker` generates code instead of loading a spec at run time; the search was not exhaustive.',
      'Heap retained: `heapUsed` after a forced GC with the result still referenced, minus the value after a forced GC before the load (median).',
    ],
  };
}

/** The spec's own example body for `GET /repos/{owner}/{repo}` (~23 KB JSON). */
async function repositoryBody(): Promise<string> {
  const document = JSON.parse(await readFile(specPath, 'utf8')) as {
    components?: { examples?: Record<string, { value?: unknown }> };
  };
  const example = document.components?.examples?.['full-repository-default-response']?.value;
  return JSON.stringify(
    example ?? { id: 1, name: 'Hello-World', full_name: 'octocat/Hello-World' },
  );
}

function toolContext(): ToolContext {
  return {
    toolCallId: 'bench',
    toolName: 'repos_get',
    signal: new AbortController().signal,
    onUpdate: () => {},
    onProgress: () => {},
  };
}

async function callSection(): Promise<BenchSection> {
  const body = await repositoryBody();
  let requests = 0;
  const server = createServer((request, response) => {
    requests++;
    if (request.method !== 'GET' || request.url !== '/repos/octocat/Hello-World') {
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"message":"Not Found"}');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    const adapter = await OpenApiToolAdapter.fromFile(specPath, {
      // `'repos/get'` would be read as method `repos` + path `/get` (see the report), so the route.
      include: ['GET /repos/{owner}/{repo}'],
      baseUrl,
      onWarning: () => {},
    });
    const tool = adapter.tool('repos_get');
    if (tool === undefined) throw new Error('no repos_get tool');
    const context = toolContext();
    const args = { owner: 'octocat', repo: 'Hello-World' };

    const viaTool = async () => {
      const result = await tool.execute(args, context);
      // Checked so neither side can skip reading the body (a JSON block after the untrusted note).
      const body = result.content.find((part) => part.type === 'json');
      if (result.isError === true || !JSON.stringify(body?.value ?? null).includes('Hello-World'))
        throw new Error('repos_get did not return the repository');
    };
    const viaFetch = async () => {
      const response = await fetch(`${baseUrl}/repos/octocat/Hello-World`, {
        headers: { accept: 'application/json' },
      });
      const text = await response.text();
      if (!response.ok || !text.includes('Hello-World'))
        throw new Error('fetch did not return the repository');
    };
    const viaFetchPretty = async () => {
      const response = await fetch(`${baseUrl}/repos/octocat/Hello-World`, {
        headers: { accept: 'application/json' },
      });
      const text = JSON.stringify(await response.json(), null, 2);
      if (!response.ok || !text.includes('Hello-World'))
        throw new Error('fetch did not return the repository');
    };
    const clients = [
      { label: 'plain fetch + text() (baseline)', call: viaFetch, ms: 0, cpu: 0 },
      { label: 'plain fetch + json() + pretty JSON', call: viaFetchPretty, ms: 0, cpu: 0 },
      { label: '@agent/tools-openapi repos_get tool.execute (ours)', call: viaTool, ms: 0, cpu: 0 },
    ];
    for (const client of clients)
      for (let index = 0; index < warmupCalls; index++) await client.call();
    const perBlock = Math.max(1, Math.floor(calls / blocks));
    for (let block = 0; block < blocks; block++) {
      for (let index = 0; index < clients.length; index++) {
        const client = clients[(index + block) % clients.length];
        if (client === undefined) continue;
        const cpuBefore = process.cpuUsage();
        const started = performance.now();
        for (let call = 0; call < perBlock; call++) await client.call();
        client.ms += performance.now() - started;
        const cpu = process.cpuUsage(cpuBefore);
        client.cpu += cpu.user + cpu.system;
      }
    }
    const total = perBlock * blocks;
    const baselineUs = ((clients[0]?.ms ?? Number.NaN) * 1000) / total;
    // The fair peer for a tool that pretty-prints JSON: fetch + json() + pretty JSON.
    const prettyUs = ((clients[1]?.ms ?? Number.NaN) * 1000) / total;
    const prettyCpu = (clients[1]?.cpu ?? Number.NaN) / total;
    const rows = clients.map((client) => {
      const us = (client.ms * 1000) / total;
      const cpu = client.cpu / total;
      return [
        client.label,
        `${us.toFixed(0)} µs`,
        `${(us / baselineUs).toFixed(2)}×`,
        `${(us / prettyUs).toFixed(2)}×`,
        `${cpu.toFixed(0)} µs (${(cpu / prettyCpu).toFixed(2)}×)`,
      ];
    });
    return {
      title: 'tools-openapi: per-call overhead of a generated tool (GET /repos/{owner}/{repo})',
      columns: [
        'Client',
        `µs/call (${total} sequential)`,
        'vs fetch',
        'vs fetch + json + pretty',
        'CPU/call (client + server; vs pretty)',
      ],
      rows,
      notes: [
        `A node:http server on 127.0.0.1 (same process) answers with the spec's own example repository (${(body.length / 1024).toFixed(1)} KB JSON); ${requests} requests served in all.`,
        `${warmupCalls} warm-up calls each, then ${blocks} blocks of ${perBlock} calls per client, alternating in rotated order. All use the global fetch (undici, keep-alive).`,
        "Ours: the tool built from the real spec (`include: ['GET /repos/{owner}/{repo}']`, `baseUrl` set) — builds the URL from the arguments, sends Accept, reads the body with a byte limit, pretty-prints the JSON and returns `{ content, details }`.",
        "CPU/call: this process's CPU time (the server runs in it too) per call.",
        'The tool gives fetch a per-call AbortSignal linked to the call’s: undici keeps its abort listener on the signal it is given until the request is garbage collected, so passing the long-lived call signal made each call slower than the last (1.47× before).',
      ],
    };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Runs the suite: the load table, then the per-call table. */
export async function run(): Promise<BenchSection[]> {
  const load = await loadSection();
  let call: BenchSection;
  try {
    call = await callSection();
  } catch (error) {
    // One failing half should not hide the other half's figures.
    call = {
      title: 'tools-openapi: per-call overhead of a generated tool',
      columns: ['Client', 'Status'],
      rows: [['all', `not available: ${describe(error)}`]],
    };
  }
  return [load, call];
}
