import { ToolRegistry } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import {
  flakyServerEntry,
  nodeServer,
  referenceServerEntry,
  resultText,
  testContext,
} from './test-helpers.js';
import { mcpToolWireName } from './tool-names.js';

const open: McpToolAdapter[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((adapter) => adapter.close()));
});

async function connectEverything(name: string, prefix?: boolean): Promise<McpToolAdapter> {
  const adapter = await McpToolAdapter.connect({
    name,
    transport: nodeServer(referenceServerEntry('everything'), ['stdio']),
    ...(prefix === undefined ? {} : { prefix }),
  });
  open.push(adapter);
  return adapter;
}

describe('mcpToolWireName with prefix: false', () => {
  it.each([
    ['create_issue', 'create_issue'],
    ['get-sum', 'get-sum'],
    ['files/read.v2', 'files_read_v2'],
    ['héllo 🌍', 'h_llo__'],
    ['', '_'],
  ])('%j becomes %j', (tool, expected) => {
    expect(mcpToolWireName('server', tool, { prefix: false })).toBe(expected);
  });

  it('cuts a long name to 64 characters with a hash that depends on the server too', () => {
    const tool = 'n'.repeat(100);
    const a = mcpToolWireName('a', tool, { prefix: false });
    expect(a).toHaveLength(64);
    expect(a).toMatch(/^n+_[0-9a-f]{8}$/);
    expect(mcpToolWireName('a', tool, { prefix: false })).toBe(a);
    expect(mcpToolWireName('b', tool, { prefix: false })).not.toBe(a);
  });
});

describe('McpToolAdapter prefix option (everything server over stdio)', () => {
  it('prefixes by default and keeps the server’s own names with prefix: false', async () => {
    const prefixed = await connectEverything('everything');
    expect(prefixed.tools().map((tool) => tool.name)).toContain('everything__echo');

    const bare = await connectEverything('everything', false);
    const names = bare.tools().map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    expect(names.filter((name) => name.startsWith('everything__echo'))).toEqual([]);
    const echo = bare.tools().find((tool) => tool.name === 'echo');
    // The namespace survives where rules and UIs need it.
    expect(echo?.source).toBe('mcp:everything');
    expect(echo?.permissionSubjects?.({ message: 'x' })).toEqual(['everything/echo']);
    const result = await echo?.execute({ message: 'hi' }, testContext({ toolName: 'echo' }));
    expect(result && resultText(result)).toBe('Echo: hi');
    const direct = await bare.callTool('get-sum', { a: 2, b: 3 });
    expect(resultText(direct)).toMatch(/5/);
  });

  it('keeps the resource tools namespaced with prefix: false', async () => {
    const bare = await connectEverything('everything', false);
    const names = bare.tools().map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['everything__list_resources', 'everything__read_resource']),
    );
  });

  it('refuses two unprefixed servers with the same tool in one registry, naming the name', async () => {
    const first = await connectEverything('one', false);
    const second = await connectEverything('two', false);
    expect(() => new ToolRegistry([...first.tools(), ...second.tools()])).toThrow(
      /Duplicate tool name "[^"]+": already used by tool "[^"]+" from mcp:one/,
    );
    // Prefixed, the same two servers live side by side.
    const third = await connectEverything('three');
    expect(() => new ToolRegistry([...first.tools(), ...third.tools()])).not.toThrow();
  });

  it('still refuses a listing whose names collide once sanitised', async () => {
    const error = await McpToolAdapter.connect({
      name: 'flaky',
      prefix: false,
      transport: nodeServer(flakyServerEntry, [], { env: { FLAKY_COLLIDE: '1' } }),
    }).catch((thrown: unknown) => thrown);
    expect(String(error)).toMatch(
      /MCP server "flaky": tools "x.y" and "x_y" both get the wire name "x_y"; exclude one with toolFilter/,
    );
  });
});
