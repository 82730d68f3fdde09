import { defaultToolNames } from '@agent/tools-builtin';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  chooseTools,
  parseToolList,
  type ToolChoice,
  ToolListError,
  toolChoiceNames,
} from './tool-choice.js';

const lists = (...texts: string[]) => texts.map((text) => parseToolList(text, '--tools'));

/** The tools a session's sources would offer without any list (one MCP server with two tools). */
const offered = [
  ...toolChoiceNames.filter((name) => name !== 'default' && name !== 'kiro'),
  'mcp__github__create_issue',
  'mcp__github__list_issues',
  'mcp__notes__read',
  'openapi__petstore__getPet',
];

const chosen = (choice: ToolChoice) => offered.filter((name) => has(choice, name));

function has(choice: ToolChoice, name: string): boolean {
  const family = /^(mcp|openapi)__([^_]+)__(.+)$/.exec(name);
  return family === null
    ? choice.has(name)
    : choice.hasFamilyTool(family[1] as 'mcp' | 'openapi', family[2] ?? '', family[3] ?? '');
}

const sessionDefault = [
  ...defaultToolNames,
  'web_fetch',
  'web_search',
  'js_repl',
  'python_repl',
  'skill',
  'run_script',
  'config',
  'config_set',
  'exit_plan_mode',
  'mcp__github__create_issue',
  'mcp__github__list_issues',
  'mcp__notes__read',
  'openapi__petstore__getPet',
];

describe('chooseTools', () => {
  it('no list is every tool a session offers today: without the opt-in ones', () => {
    expect(chosen(chooseTools([]))).toEqual(sessionDefault);
    expect(chooseTools([]).builtin).toEqual([...defaultToolNames]);
  });

  it.each([
    ['default', sessionDefault],
    ['-bash', sessionDefault.filter((name) => name !== 'bash')],
    ['read_file,glob', ['read_file', 'glob']],
    ['kiro', ['think', 'report_issue', 'knowledge', 'introspect', 'code']],
    ['bash,kiro', ['bash', 'think', 'report_issue', 'use_aws', 'knowledge', 'introspect', 'code']],
    ['default,kiro,-kiro', sessionDefault],
    ['-default,introspect', ['introspect']],
    ['-web_fetch,-web_search', sessionDefault.filter((name) => !name.startsWith('web_'))],
    ['-web_*', sessionDefault.filter((name) => !name.startsWith('web_'))],
    [
      '-js_repl,-python_repl,-skill,-run_script',
      sessionDefault.filter((name) => !/repl|skill|run_script/.test(name)),
    ],
    ['-config_set', sessionDefault.filter((name) => name !== 'config_set')],
    ['-mcp__github', sessionDefault.filter((name) => !name.startsWith('mcp__github'))],
    ['-mcp__github__*', sessionDefault.filter((name) => !name.startsWith('mcp__github'))],
    ['-mcp__*', sessionDefault.filter((name) => !name.startsWith('mcp__'))],
    [
      '-mcp__github__create_issue',
      sessionDefault.filter((name) => name !== 'mcp__github__create_issue'),
    ],
    ['-mcp__git*', sessionDefault.filter((name) => !name.startsWith('mcp__github'))],
    [
      '-mcp__github__*_issue',
      sessionDefault.filter((name) => name !== 'mcp__github__create_issue'),
    ],
    ['-openapi__petstore', sessionDefault.filter((name) => !name.startsWith('openapi__'))],
    ['read_file,mcp__notes', ['read_file', 'mcp__notes__read']],
    ['read_file,mcp__github__list_issues', ['read_file', 'mcp__github__list_issues']],
    ['*', offered],
    ['*,-mcp__*,-openapi__*', offered.filter((name) => !/^(mcp|openapi)__/.test(name))],
    ['*_repl', ['js_repl', 'python_repl']],
  ])('%s', (text, expected) => {
    expect(chosen(chooseTools(lists(text)))).toEqual(expected);
  });

  it('a list starting with a removal changes the set before it; any other replaces it', () => {
    const narrowed = chooseTools(lists('default,kiro', '-use_aws'));
    expect(narrowed.has('think')).toBe(true);
    expect(narrowed.has('use_aws')).toBe(false);
    expect(chosen(chooseTools(lists('default,kiro', 'read_file')))).toEqual(['read_file']);
    expect(chosen(chooseTools(lists('read_file', '-read_file,mcp__notes')))).toEqual([
      'mcp__notes__read',
    ]);
  });

  it('use_aws only with bash: removing bash removes use_aws too, and says so', () => {
    for (const text of ['default,kiro,-bash', 'use_aws', 'kiro,read_file']) {
      const choice = chooseTools(lists(text));
      expect(choice.has('use_aws')).toBe(false);
      expect(choice.builtin).not.toContain('use_aws');
      expect(choice.notices().join('\n')).toContain('use_aws left out');
    }
    expect(chooseTools(lists('default,kiro')).has('use_aws')).toBe(true);
    expect(chooseTools(lists('default,kiro')).notices()).toEqual([]);
    expect(chooseTools(lists('default')).notices()).toEqual([]);
  });

  it('a server none of whose tools can be chosen is not wanted; one some tool of may be, is', () => {
    const wants = (text: string, server = 'github') =>
      chooseTools(lists(...text.split(' '))).wantsAny('mcp', server);
    expect(wants('default')).toBe(true);
    expect(wants('-mcp__github')).toBe(false);
    expect(wants('-mcp__*')).toBe(false);
    expect(wants('-mcp__git*')).toBe(false);
    expect(wants('-mcp__notes')).toBe(true);
    expect(wants('read_file')).toBe(false);
    expect(wants('read_file,mcp__github__list_issues')).toBe(true);
    expect(wants('read_file,mcp__*__list_issues')).toBe(true);
    expect(wants('read_file,mcp__github*')).toBe(true);
    expect(wants('-mcp__github__create_issue')).toBe(true);
    expect(wants('-mcp__github,mcp__github__list_issues')).toBe(true);
    expect(wants('mcp__github__list_issues,-mcp__github')).toBe(false);
    expect(wants('read_file mcp__github')).toBe(true);
    expect(wants('*')).toBe(true);
    expect(wants('*,-mcp__github')).toBe(false);
  });

  it('wantsAny never says no for a server a tool of which is chosen (property)', () => {
    const itemArbitrary = fc.constantFrom(
      'default',
      'read_file',
      'mcp__github',
      'mcp__github__*',
      'mcp__github__create_issue',
      'mcp__github__list_*',
      'mcp__*',
      'mcp__notes',
      '*',
      'mcp__*__read',
    );
    const listArbitrary = fc.array(
      fc.tuple(fc.boolean(), itemArbitrary).map(([remove, item]) => (remove ? `-${item}` : item)),
      { minLength: 1, maxLength: 4 },
    );
    fc.assert(
      fc.property(fc.array(listArbitrary, { maxLength: 3 }), (texts) => {
        const choice = chooseTools(texts.map((items) => ({ items, source: 'test' })));
        for (const server of ['github', 'notes'])
          for (const tool of ['create_issue', 'list_issues', 'read', 'other'])
            if (choice.hasFamilyTool('mcp', server, tool))
              expect(choice.wantsAny('mcp', server)).toBe(true);
      }),
    );
  });

  it.each([
    '',
    'default,',
    'nope',
    '-nope',
    '--bash',
    'BASH',
    'thinking',
    ' ',
    'github__create_issue',
    'nope*',
  ])('refuses %j naming the valid names and the syntax', (text) => {
    expect(() => parseToolList(text, '--tools')).toThrow(ToolListError);
    expect(() => parseToolList(text, '--tools')).toThrow(
      /valid: default, kiro, bash, .*introspect, code, web_fetch.*mcp__<server>/,
    );
  });

  it.each(['agent__reviewer__read_file', '-agent__a__b'])(
    'refuses %j: a sub-agent is one tool (agent__<name>)',
    (text) => {
      expect(() => parseToolList(text, '--tools')).toThrow(
        /a sub-agent is one tool, agent__<name>/,
      );
    },
  );

  it('agent__<name> and globs choose sub-agents; default has them all', () => {
    const agent = (choice: ToolChoice, name: string) => choice.hasFamilyTool('agent', name, name);
    expect(agent(chooseTools([]), 'reviewer')).toBe(true);
    expect(agent(chooseTools(lists('read_file')), 'reviewer')).toBe(false);
    expect(agent(chooseTools(lists('read_file,agent__reviewer')), 'reviewer')).toBe(true);
    expect(agent(chooseTools(lists('read_file,agent__reviewer')), 'helper')).toBe(false);
    expect(agent(chooseTools(lists('-agent__rev*')), 'reviewer')).toBe(false);
    expect(agent(chooseTools(lists('-agent__rev*')), 'helper')).toBe(true);
    // An MCP server called "agent" is not a sub-agent.
    expect(chooseTools(lists('-agent__reviewer')).hasFamilyTool('mcp', 'agent', 'x')).toBe(true);
  });

  it.each(['mcp__', 'mcp____x', 'mcp__github__', '-openapi__', 'mcp__git hub', 'mcp__a/b'])(
    'refuses the malformed family name %j, saying the form',
    (text) => {
      expect(() => parseToolList(text, '--tools')).toThrow(/of the form (mcp|openapi)__<name>/);
    },
  );

  it('reports family names that match nothing loaded, but not globs', () => {
    const choice = chooseTools([
      ...lists('default,mcp__gihub,-mcp__github__delete_repo,mcp__*__x,-mcp__notes__*'),
      { items: ['-mcp__absent'], source: '/home/me/.agent/settings.json: "tools"' },
    ]);
    const loaded = new Map([
      ['github', ['create_issue', 'list_issues']],
      ['notes', undefined],
    ]);
    expect(choice.unmatched('mcp', loaded)).toEqual([
      { item: 'mcp__gihub', source: '--tools', known: ['github', 'notes'] },
      {
        item: '-mcp__github__delete_repo',
        source: '--tools',
        known: ['mcp__github__create_issue', 'mcp__github__list_issues'],
      },
      {
        item: '-mcp__absent',
        source: '/home/me/.agent/settings.json: "tools"',
        known: ['github', 'notes'],
      },
    ]);
  });
});
