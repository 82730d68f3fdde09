import { toolNamePattern } from '@agent/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mcpToolWireName, sanitizeNamePart } from './tool-names.js';

describe('mcpToolWireName', () => {
  it('joins server and tool with a double underscore', () => {
    expect(mcpToolWireName('github', 'create_issue')).toBe('github__create_issue');
    expect(mcpToolWireName('everything', 'get-sum')).toBe('everything__get-sum');
  });

  it('replaces characters providers reject', () => {
    expect(mcpToolWireName('my server', 'files/read.v2')).toBe('my_server__files_read_v2');
    expect(mcpToolWireName('s', 'héllo 🌍')).toBe('s__h_llo__');
    expect(sanitizeNamePart('')).toBe('_');
  });

  it('shortens long names deterministically with a hash of the original names', () => {
    const tool = `query_${'x'.repeat(80)}`;
    const name = mcpToolWireName('db', tool);
    expect(name).toHaveLength(64);
    expect(name).toMatch(/^db__query_x+_[0-9a-f]{8}$/);
    expect(mcpToolWireName('db', tool)).toBe(name);
    // Two names that share their first 55 characters still differ.
    expect(mcpToolWireName('db', `${tool}a`)).not.toBe(mcpToolWireName('db', `${tool}b`));
  });

  it('always yields a valid wire name, stable for the same input, unchanged when already short and valid', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), fc.string({ maxLength: 100 }), (server, tool) => {
        const name = mcpToolWireName(server, tool);
        expect(name).toMatch(toolNamePattern);
        expect(mcpToolWireName(server, tool)).toBe(name);
        const plain = `${server}__${tool}`;
        if (toolNamePattern.test(plain) && server !== '' && tool !== '') expect(name).toBe(plain);
      }),
    );
  });
});
