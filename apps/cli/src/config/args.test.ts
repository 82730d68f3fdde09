import { untrustedFence, untrustedNote } from '@agent/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatArguments, summarizeResult } from '../ui/transcript.js';
import { parseCliArgs, parseOpenApiFlag, UsageError } from './args.js';

describe('parseCliArgs', () => {
  it('--resume without a file picks from a list; with one, resumes it', () => {
    expect(parseCliArgs(['--resume']).pickSession).toBe(true);
    expect(parseCliArgs(['--resume', '--mode', 'read-only'])).toMatchObject({
      pickSession: true,
      mode: 'read-only',
    });
    expect(parseCliArgs(['--resume', 'a.json'])).toMatchObject({
      pickSession: false,
      resume: 'a.json',
    });
    expect(() => parseCliArgs(['--resume', '--continue'])).toThrow(UsageError);
  });

  it('reads repeatable rules and OpenAPI specs in order', () => {
    const options = parseCliArgs(
      [
        '-p',
        'hi',
        '--allow',
        'bash(git *)',
        '--allow',
        'read_file',
        '--deny',
        'bash(rm *)',
        '--openapi',
        './pets.yaml=pets',
        '--openapi',
        'https://x.test/spec?format=json=api',
        '--max-turns',
        '7',
      ],
      '/work',
    );
    expect(options).toMatchObject({
      command: 'run',
      prompt: 'hi',
      cwd: '/work',
      allow: ['bash(git *)', 'read_file'],
      deny: ['bash(rm *)'],
      ask: [],
      maxTurns: 7,
      openapi: [
        { spec: './pets.yaml', name: 'pets' },
        { spec: 'https://x.test/spec?format=json', name: 'api' },
      ],
    });
  });

  it('knows the demo command and rejects stray words', () => {
    expect(parseCliArgs(['demo']).command).toBe('demo');
    expect(() => parseCliArgs(['demo', 'now'])).toThrow(UsageError);
    expect(() =>
      parseCliArgs(['--base-url', 'http://h/v1', '--provider', 'google', '--model', 'm']),
    ).toThrow(/--base-url is for OpenAI-compatible servers/);
  });

  it('agent mcp login names one server', () => {
    expect(parseCliArgs(['mcp', 'login', 'docs'])).toMatchObject({
      command: 'mcp-login',
      mcpLoginServer: 'docs',
    });
    for (const args of [
      ['mcp', 'login'],
      ['mcp', 'login', 'a', 'b'],
      ['mcp', 'login', ''],
    ])
      expect(() => parseCliArgs(args)).toThrow(
        'agent mcp login names one MCP server: agent mcp login <server>',
      );
    expect(() => parseCliArgs(['mcp', 'logout'])).toThrow(
      'Unknown mcp command: use "agent mcp serve [--http] [--port N]" or "agent mcp login <server>"',
    );
    // Its help is the whole text (it has no page of its own).
    expect(parseCliArgs(['mcp', 'login', 'docs', '--help'])).toMatchObject({ command: 'help' });
    expect(parseCliArgs(['mcp', 'login', 'docs', '--help']).helpTopic).toBe('mcp-login');
  });

  it('-p with no text after it takes the other words as the prompt, else stdin', () => {
    expect(parseCliArgs(['-p']).prompt).toBe('-');
    expect(parseCliArgs(['--print']).prompt).toBe('-');
    expect(parseCliArgs(['-p', '--mode', 'full-access'])).toMatchObject({
      prompt: '-',
      mode: 'full-access',
    });
    expect(parseCliArgs(['--model', 'm', '-p'])).toMatchObject({ prompt: '-', model: 'm' });
    expect(parseCliArgs(['-p', '--mode', 'read-only', 'fix', 'it']).prompt).toBe('fix it');
    expect(parseCliArgs(['-p', '--max-turns', '2', 'demo']).command).toBe('run');
    // A value is still a value, even one that names a command.
    expect(parseCliArgs(['-p', 'demo'])).toMatchObject({ command: 'run', prompt: 'demo' });
    expect(parseCliArgs(['-p', '-'])).toMatchObject({ prompt: '-' });
    expect(() => parseCliArgs(['-p', '--print', 'x'])).toThrow(/-p is given twice/);
    expect(() => parseCliArgs(['-p', 'x', 'y'])).toThrow(/quote the whole prompt/);
  });

  it('splits spec=name only when the name is a plain word', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((spec) => !spec.includes('=')),
        fc.stringMatching(/^[a-zA-Z0-9_-]{1,20}$/),
        (spec, name) => {
          expect(parseOpenApiFlag(`${spec}=${name}`)).toEqual({ spec, name });
          expect(parseOpenApiFlag(spec)).toEqual({ spec, name: undefined });
        },
      ),
    );
    expect(parseOpenApiFlag('https://x.test/a?b=c/d')).toEqual({
      spec: 'https://x.test/a?b=c/d',
      name: undefined,
    });
    // A query's own value is never a name: a key would become part of every tool's name.
    for (const spec of [
      'https://x.test/spec.json?api_key=sk_live_abc123',
      'https://x.test/spec.json?v=2&token=abc-123',
      'HTTP://x.test/spec?key=a',
    ])
      expect(parseOpenApiFlag(spec)).toEqual({ spec, name: undefined });
    expect(parseOpenApiFlag('https://x.test/spec?format=json=api')).toEqual({
      spec: 'https://x.test/spec?format=json',
      name: 'api',
    });
    expect(parseOpenApiFlag('https://x.test/spec?a=1&key=abc=pets')).toEqual({
      spec: 'https://x.test/spec?a=1&key=abc',
      name: 'pets',
    });
    expect(parseOpenApiFlag('https://x.test/spec.json=pets')).toEqual({
      spec: 'https://x.test/spec.json',
      name: 'pets',
    });
  });
});

describe('transcript formatting', () => {
  it('shows malformed arguments as written and results on one line', () => {
    expect(formatArguments('{"path": "a",\n "n": 1}')).toBe('{"path":"a","n":1}');
    expect(formatArguments('{"path": ')).toBe('{"path": ');
    expect(
      summarizeResult({ content: [{ type: 'text', text: '\n first\nsecond\nthird\n' }] }),
    ).toBe('first (+2 lines)');
    expect(summarizeResult({ content: [{ type: 'text', text: '{\n  "a": [1, 2]\n}' }] })).toBe(
      '{"a":[1,2]}',
    );
    expect(summarizeResult({ content: [] })).toBe('(no output)');
  });

  it('summarises what a fenced result holds, not its untrusted-content note and markers', () => {
    const fence = untrustedFence('MCP');
    const fenced = (inner: string) =>
      `${untrustedNote('MCP', 'the MCP server "memory"')}\n${fence.open}\n${inner}\n${fence.close}`;
    expect(
      summarizeResult({ content: [{ type: 'text', text: fenced('{\n  "entities": []\n}') }] }),
    ).toBe('{"entities":[]}');
    expect(
      summarizeResult({
        content: [{ type: 'text', text: fenced('Ada\nwrote\nthe first program') }],
      }),
    ).toBe('Ada (+2 lines)');
    // A header of the tool's own before the fence stays first (web_fetch's URL line).
    expect(
      summarizeResult({
        content: [{ type: 'text', text: `URL: https://example.com/\n\n${fenced('page')}` }],
      }),
    ).toBe('URL: https://example.com/ (+1 lines)');
  });
});
