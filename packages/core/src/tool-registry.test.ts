import { describe, expect, it } from 'vitest';
import { AgentError } from './errors.js';
import type { AnyAgentTool } from './tool.js';
import { ToolRegistry } from './tool-registry.js';

function tool(name: string, source?: string, aliases?: string[]): AnyAgentTool {
  return {
    name,
    description: name,
    parameters: { type: 'object', properties: {} },
    ...(source === undefined ? {} : { source }),
    ...(aliases === undefined ? {} : { aliases }),
    execute: async () => ({ content: [] }),
  };
}

describe('ToolRegistry', () => {
  it('looks tools up by name and alias', () => {
    const registry = new ToolRegistry([tool('read_file', 'builtin', ['read', 'cat'])]);
    expect(registry.get('read_file')?.name).toBe('read_file');
    expect(registry.get('cat')?.name).toBe('read_file');
    expect(registry.get('nope')).toBeUndefined();
    expect(registry.names()).toEqual(['read_file']);
    expect(registry.size).toBe(1);
    expect(registry.definitions()).toEqual([
      {
        name: 'read_file',
        description: 'read_file',
        parameters: { type: 'object', properties: {} },
      },
    ]);
  });

  it('rejects duplicate names and aliases, and bad names', () => {
    const registry = new ToolRegistry([tool('a', 'x', ['b'])]);
    expect(() => registry.register(tool('a'))).toThrow(
      /Duplicate tool name "a": already used by tool "a" from x/,
    );
    expect(() => registry.register(tool('b'))).toThrow(AgentError);
    expect(() => registry.register(tool('c', undefined, ['a']))).toThrow(/Duplicate tool name "a"/);
    expect(() => registry.register(tool('bad name'))).toThrow(/Invalid tool name/);
    expect(() => registry.register(tool('d', undefined, ['d']))).toThrow(/same name twice/);
    expect(registry.has('c')).toBe(false);
  });

  it('unregisters a tool with its aliases', () => {
    const registry = new ToolRegistry([tool('a', undefined, ['b'])]);
    expect(registry.unregister('a')).toBe(true);
    expect(registry.has('b')).toBe(false);
    expect(registry.unregister('a')).toBe(false);
    registry.register(tool('b'));
    expect(registry.get('b')?.name).toBe('b');
  });

  it('selects by availability patterns', () => {
    const registry = new ToolRegistry([
      tool('read_file', 'builtin'),
      tool('write_file', 'builtin'),
      tool('github__list_issues', 'mcp:github'),
      tool('github__create_issue', 'mcp:github'),
      tool('getPet', 'openapi:petstore'),
    ]);
    const names = (patterns: string[]) => registry.select(patterns).names();
    expect(names(['*'])).toHaveLength(5);
    expect(names(['github__*'])).toEqual(['github__list_issues', 'github__create_issue']);
    expect(names(['@builtin'])).toEqual(['read_file', 'write_file']);
    expect(names(['@mcp:github/github__list_issues'])).toEqual(['github__list_issues']);
    expect(names(['@mcp:github/*', 'getPet'])).toEqual([
      'github__list_issues',
      'github__create_issue',
      'getPet',
    ]);
    expect(names(['*', '!write_file', '!@mcp:github'])).toEqual(['read_file', 'getPet']);
    expect(names([])).toEqual([]);
  });
});
