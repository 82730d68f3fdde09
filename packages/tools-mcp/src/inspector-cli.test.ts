import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { defineTool, type PermissionGate } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { serveHttp } from './serve.js';

// The MCP Inspector's CLI mode (@modelcontextprotocol/inspector-cli, pinned) as a third-party
// client of serveHttp: it lists and calls the served tools, and meets the permission gate.
const require = createRequire(import.meta.url);
const inspector = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/inspector-cli/package.json')),
  'build',
  'index.js',
);

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  policy: { permission: 'read-only' },
  execute: async ({ a, b }) => `${a + b}`,
});
const remove = defineTool({
  name: 'remove',
  description: 'Removes a file.',
  input: z.object({ path: z.string() }),
  permissionSubjects: ({ path: target }) => [target],
  execute: async ({ path: target }) => `removed ${target}`,
});
const gate: PermissionGate = (request) =>
  request.subjects.some((subject) => subject.startsWith('/etc'))
    ? { behavior: 'deny', reason: 'outside the workspace' }
    : { behavior: 'allow' };

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** Runs the Inspector CLI against a server, with its token; resolves with its parsed JSON output. */
function inspect(
  served: { url: string; token: string | undefined },
  args: string[],
): Promise<unknown> {
  const header =
    served.token === undefined ? [] : ['--header', `Authorization: Bearer ${served.token}`];
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [inspector, served.url, '--transport', 'http', ...header, ...args],
      // Its build/index.js finds its own package.json relative to the working directory.
      { timeout: 60_000, cwd: path.dirname(inspector) },
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

describe('serveHttp with the MCP Inspector CLI as the client', () => {
  it('lists the tools with their schemas and annotations, calls them, and the gate refuses', async () => {
    const served = await serveHttp({ tools: [add, remove], permissionGate: gate });
    closers.push(served.close);

    const listed = (await inspect(served, ['--method', 'tools/list'])) as {
      tools: { name: string; inputSchema: { properties?: object }; annotations?: object }[];
    };
    expect(listed.tools.map((tool) => tool.name)).toEqual(['add', 'remove']);
    expect(Object.keys(listed.tools[0]?.inputSchema.properties ?? {})).toEqual(['a', 'b']);
    expect(listed.tools[0]?.annotations).toMatchObject({ readOnlyHint: true });

    const sum = await inspect(served, [
      '--method',
      'tools/call',
      '--tool-name',
      'add',
      '--tool-arg',
      'a=40',
      'b=2',
    ]);
    expect(sum).toMatchObject({ content: [{ type: 'text', text: '42' }] });

    const refused = (await inspect(served, [
      '--method',
      'tools/call',
      '--tool-name',
      'remove',
      '--tool-arg',
      'path=/etc/passwd',
    ])) as { isError?: boolean; content: { text: string }[] };
    expect(refused.isError).toBe(true);
    expect(refused.content[0]?.text).toContain('outside the workspace');
  }, 120_000);

  it('without the token, or with a wrong one, it is refused', async () => {
    const served = await serveHttp({ tools: [add] });
    closers.push(served.close);
    const wrong = `${served.token?.slice(0, -1)}${served.token?.endsWith('A') ? 'B' : 'A'}`;
    const cases = [
      [undefined, /Unauthorized: send the token of this server/],
      [wrong, /Unauthorized: the bearer token is not valid/],
    ] as const;
    for (const [token, refusal] of cases) {
      const failure = await inspect({ url: served.url, token }, ['--method', 'tools/list']).then(
        () => 'listed',
        (error: Error) => error.message,
      );
      expect(failure).toMatch(refusal);
    }
  }, 120_000);
});
